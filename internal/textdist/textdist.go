// Package textdist measures how far apart two short texts are: the edit
// distance the product uses for "did you mean" hints (a mistyped flag,
// settings key or file name) and for how close an Edit's old text comes
// to a region of the file.
package textdist

// Distance is the Levenshtein distance between a and b: the fewest
// single-rune insertions, deletions and substitutions that turn a into b.
func Distance(a, b string) int {
	return AtMost(a, b, len(a)+len(b))
}

// AtMost is Distance for callers that only care whether a and b are within
// limit edits of each other: it returns the distance when that is at most
// limit, and limit+1 as soon as it is certain to be more, without
// finishing the table.
func AtMost(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return min(prev[len(rb)], limit+1)
}

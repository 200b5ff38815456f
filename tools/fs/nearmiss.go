package fs

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/agent-mcp/agent-mcp/internal/textdist"
)

// Limits of the near-miss search: past them an Edit that finds no match
// says so without looking for the closest text.
const (
	nearMissMaxBody      = 8 << 20 // bytes of file
	nearMissMaxOld       = 64 << 10
	nearMissMaxPairs     = 4_000_000 // line comparisons before only anchored windows are scored
	nearMissMinSimilar   = 0.5       // below this nothing is shown
	nearMissMaxDiffLines = 24
	nearMissMaxReasons   = 6
	nearMissMaxLevRunes  = 4000
	nearMissMaxRefine    = 1000 // bytes of old_string up to which the window's ends are moved
)

// nearMiss finds the region of body (a file's text, its own line endings)
// that old_string most resembles, once whitespace runs, quote styles and
// line endings are set aside, and words it for the model: where it is, how
// similar, a short diff from old_string to the file's text, and what
// differs. It returns "" when the file is too large to search, or nothing
// is at least half similar.
func nearMiss(body []byte, old string) string {
	if len(body) > nearMissMaxBody || len(old) > nearMissMaxOld || !utf8.Valid(body) {
		return ""
	}
	oldLines := strings.Split(strings.TrimSuffix(toLF(old), "\n"), "\n")
	raw := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(raw) == 0 || strings.TrimSpace(old) == "" {
		return ""
	}
	start, k := bestWindow(raw, oldLines)
	start, k, sim := refineWindow(raw, oldLines, start, k)
	region := raw[start : start+k]
	regionLF := lf(region)
	if sim < nearMissMinSimilar {
		return ""
	}
	first, last := start+1, start+k
	where := fmt.Sprintf("line %d", first)
	if k > 1 {
		where = fmt.Sprintf("lines %d-%d", first, last)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe closest text is %s of the file, %d%% similar once whitespace and quotes are normalised. From old_string (-) to the file (+):\n", where, int(sim*100))
	b.WriteString(shortDiff(strings.Join(oldLines, "\n")+"\n", strings.Join(regionLF, "\n")+"\n"))
	if reasons := differences(oldLines, region, first); len(reasons) > 0 {
		b.WriteString("What differs:\n")
		for _, r := range reasons {
			b.WriteString("- " + r + "\n")
		}
	}
	b.WriteString("Copy the text from the file as it is (Read shows it) into old_string and retry.")
	return b.String()
}

// bestWindow returns the start and length of the run of lines of file
// that old most resembles, scored line by line (see lineSimilarity).
func bestWindow(file, old []string) (start, k int) {
	k = min(len(old), len(file))
	oldN := make([]lineKey, len(old))
	for i, l := range old {
		oldN[i] = keyOf(l)
	}
	cache := make([]*lineKey, len(file))
	key := func(i int) *lineKey {
		if cache[i] == nil {
			lk := keyOf(strings.TrimSuffix(file[i], "\r"))
			cache[i] = &lk
		}
		return cache[i]
	}
	candidates := func(yield func(int) bool) {
		for j := 0; j+k <= len(file); j++ {
			if !yield(j) {
				return
			}
		}
	}
	if (len(file)-k+1)*k > nearMissMaxPairs {
		// Too many pairs to score them all: only windows in which some
		// line matches a line of old_string once normalised.
		at := map[string][]int{}
		for i, l := range oldN {
			if l.norm != "" {
				at[l.norm] = append(at[l.norm], i)
			}
		}
		starts := map[int]bool{}
		for j := range file {
			for _, i := range at[key(j).norm] {
				if s := j - i; s >= 0 && s+k <= len(file) {
					starts[s] = true
				}
			}
		}
		sorted := slices.Sorted(func(yield func(int) bool) {
			for s := range starts {
				if !yield(s) {
					return
				}
			}
		})
		candidates = slices.Values(sorted)
	}
	best := -1.0
	for j := range candidates {
		score := 0.0
		for i := range k {
			edge := i == 0 || i == k-1
			score += lineSimilarity(&oldN[i], key(j+i), edge)
		}
		if score > best {
			best, start = score, j
		}
	}
	return start, k
}

// refineWindow moves the window's ends by up to two lines each where
// that makes it more similar to old as a whole (a line old_string lacks
// or has too many), and returns it with its similarity.
func refineWindow(file, old []string, start, k int) (int, int, float64) {
	oldN := normText(old)
	best := similarity(oldN, normText(lf(file[start:start+k])))
	if len(oldN) > nearMissMaxRefine {
		return start, k, best
	}
	s0, e0 := start, start+k
	for s := max(0, s0-2); s <= s0+2; s++ {
		for e := max(s+1, e0-2); e <= min(len(file), e0+2); e++ {
			if sim := similarity(oldN, normText(lf(file[s:e]))); sim > best+1e-9 {
				best, start, k = sim, s, e-s
			}
		}
	}
	return start, k, best
}

// lf returns lines without a final CR.
func lf(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}

// lineKey is a line reduced for comparison: normalised text and its
// tokens, sorted.
type lineKey struct {
	norm   string
	tokens []string
}

func keyOf(line string) lineKey {
	n := normLine(line)
	toks := tokens(n)
	slices.Sort(toks)
	return lineKey{norm: n, tokens: toks}
}

// lineSimilarity scores two normalised lines from 0 to 1: 1 when equal,
// else the Dice coefficient of their tokens. An edge line of old_string
// (its first or last) may be part of a longer line of the file, so there
// the share of its tokens found in the file's line counts too.
func lineSimilarity(old, file *lineKey, edge bool) float64 {
	if old.norm == file.norm {
		return 1
	}
	if len(old.tokens) == 0 || len(file.tokens) == 0 {
		return 0
	}
	common := 0
	for i, j := 0, 0; i < len(old.tokens) && j < len(file.tokens); {
		switch strings.Compare(old.tokens[i], file.tokens[j]) {
		case 0:
			common++
			i++
			j++
		case -1:
			i++
		default:
			j++
		}
	}
	dice := 2 * float64(common) / float64(len(old.tokens)+len(file.tokens))
	if edge {
		if c := 0.9 * float64(common) / float64(len(old.tokens)); c > dice {
			return c
		}
	}
	return dice
}

// normLine trims a line, collapses its whitespace runs to one space and
// makes every quote a straight double quote.
func normLine(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case isDoubleQuote(r) || isSingleQuote(r) || r == '`':
			r = '"'
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func normText(lines []string) string {
	n := make([]string, len(lines))
	for i, l := range lines {
		n[i] = normLine(l)
	}
	return strings.Join(n, "\n")
}

// tokens splits normalised text into words (letters, digits, _) and
// single other characters, spaces left out.
func tokens(s string) []string {
	var out []string
	word := -1
	for i, r := range s {
		isWord := r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
		if isWord {
			if word < 0 {
				word = i
			}
			continue
		}
		if word >= 0 {
			out = append(out, s[word:i])
			word = -1
		}
		if !unicode.IsSpace(r) {
			out = append(out, string(r))
		}
	}
	if word >= 0 {
		out = append(out, s[word:])
	}
	return out
}

// similarity is 1 - edit distance / length of the longer text, on runes;
// for texts too long to measure so, the share of equal lines.
func similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 && len(rb) == 0 {
		return 1
	}
	if len(ra) > nearMissMaxLevRunes || len(rb) > nearMissMaxLevRunes {
		la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
		same := 0
		for i := range min(len(la), len(lb)) {
			if la[i] == lb[i] {
				same++
			}
		}
		return float64(same) / float64(max(len(la), len(lb)))
	}
	return 1 - float64(textdist.Distance(a, b))/float64(max(len(ra), len(rb)))
}

// shortDiff is the unified diff from a to b without its headers, at most
// nearMissMaxDiffLines lines.
func shortDiff(a, b string) string {
	lines := strings.Split(strings.TrimSuffix(udiff.Unified("old_string", "file", a, b), "\n"), "\n")
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, `\ No newline`) {
			continue
		}
		out = append(out, l)
	}
	if len(out) > nearMissMaxDiffLines {
		more := len(out) - nearMissMaxDiffLines
		out = append(out[:nearMissMaxDiffLines], fmt.Sprintf("... (%d more diff lines)", more))
	}
	return strings.Join(out, "\n") + "\n"
}

// differences says, line by line, how old (LF lines) differs from region
// (the file's lines, maybe ending in CR), whose first line is number
// first: line endings, indentation (tabs or spaces, how much), trailing
// whitespace, spacing within a line, quotes, changed words.
func differences(old, region []string, first int) []string {
	var out []string
	add := func(s string) bool {
		if len(out) == nearMissMaxReasons {
			return false
		}
		out = append(out, s)
		return true
	}
	var crlf []int
	for i := range region[:len(region)-1] {
		if strings.HasSuffix(region[i], "\r") {
			crlf = append(crlf, first+i)
		}
	}
	if len(crlf) > 0 && len(crlf) < len(region)-1 {
		add(fmt.Sprintf("line endings: the file ends %s with CRLF (\\r\\n) and the lines around with LF; old_string's endings must match each line", lineList(crlf)))
	}
	for _, p := range alignLines(old, lf(region)) {
		i, j := p[0], p[1]
		if i < 0 {
			if !add(fmt.Sprintf("line %d: the file has this line, which old_string lacks: %q", first+j, strings.TrimSpace(region[j]))) {
				break
			}
			continue
		}
		if j < 0 {
			if !add(fmt.Sprintf("old_string has a line the file lacks here: %q", strings.TrimSpace(old[i]))) {
				break
			}
			continue
		}
		o, f := old[i], strings.TrimSuffix(region[j], "\r")
		if o == f {
			continue
		}
		n := first + j
		edge := i == 0 || i == len(old)-1
		var r string
		switch {
		case strings.TrimLeft(o, " \t") == strings.TrimLeft(f, " \t"):
			r = fmt.Sprintf("line %d: indentation: the file has %s, old_string %s", n, describeIndent(f), describeIndent(o))
		case strings.TrimRight(o, " \t") == strings.TrimRight(f, " \t"):
			r = fmt.Sprintf("line %d: trailing whitespace: the file has %s, old_string %s", n, describeTrailing(f), describeTrailing(o))
		case edge && strings.Contains(f, strings.TrimSpace(o)):
			if lo, lf := leading(o), leading(f); lo != "" && lo != lf {
				r = fmt.Sprintf("line %d: indentation: the file has %s, old_string %s", n, describeIndent(f), describeIndent(o))
			} else {
				continue
			}
		case strings.Join(strings.Fields(o), " ") == strings.Join(strings.Fields(f), " "):
			r = fmt.Sprintf("line %d: spacing within the line differs (the file: %q, old_string: %q)", n, strings.TrimSpace(f), strings.TrimSpace(o))
		case normLine(o) == normLine(f):
			r = fmt.Sprintf("line %d: quotes: the file has %s where old_string has %s", n, quotesOf(f), quotesOf(o))
		default:
			r = wordChange(n, o, f, edge)
		}
		if r != "" && !add(r) {
			break
		}
	}
	return out
}

// alignLines pairs the lines of old with those of the file's region in
// order, most alike first (Needleman-Wunsch on lineSimilarity, free
// gaps); -1 on one side marks a line only the other has.
func alignLines(old, region []string) [][2]int {
	if len(old) == len(region) || len(old)*len(region) > 250_000 {
		out := make([][2]int, 0, max(len(old), len(region)))
		for i := range max(len(old), len(region)) {
			p := [2]int{i, i}
			if i >= len(old) {
				p[0] = -1
			}
			if i >= len(region) {
				p[1] = -1
			}
			out = append(out, p)
		}
		return out
	}
	ko := make([]lineKey, len(old))
	for i, l := range old {
		ko[i] = keyOf(l)
	}
	kr := make([]lineKey, len(region))
	for j, l := range region {
		kr[j] = keyOf(l)
	}
	sim := func(i, j int) float64 {
		return lineSimilarity(&ko[i], &kr[j], i == 0 || i == len(old)-1)
	}
	score := make([][]float64, len(old)+1)
	for i := range score {
		score[i] = make([]float64, len(region)+1)
	}
	for i := len(old) - 1; i >= 0; i-- {
		for j := len(region) - 1; j >= 0; j-- {
			best := max(score[i+1][j], score[i][j+1])
			if s := sim(i, j); s >= 0.3 {
				best = max(best, score[i+1][j+1]+s)
			}
			score[i][j] = best
		}
	}
	var out [][2]int
	i, j := 0, 0
	for i < len(old) || j < len(region) {
		switch {
		case i < len(old) && j < len(region) && sim(i, j) >= 0.3 && score[i][j] == score[i+1][j+1]+sim(i, j):
			out = append(out, [2]int{i, j})
			i++
			j++
		case j < len(region) && (i == len(old) || score[i][j] == score[i][j+1]):
			out = append(out, [2]int{-1, j})
			j++
		default:
			out = append(out, [2]int{i, -1})
			i++
		}
	}
	return out
}

func lineList(ns []int) string {
	if len(ns) == 1 {
		return fmt.Sprintf("line %d", ns[0])
	}
	s := make([]string, 0, 4)
	for i, n := range ns {
		if i == 3 {
			s = append(s, "…")
			break
		}
		s = append(s, fmt.Sprint(n))
	}
	return "lines " + strings.Join(s, ", ")
}

func leading(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// describeIndent words a line's leading whitespace: "1 tab", "4 spaces",
// "1 tab and 2 spaces", "no indentation".
func describeIndent(line string) string {
	return describeSpace(leading(line), "no indentation")
}

func describeTrailing(line string) string {
	return describeSpace(line[len(strings.TrimRight(line, " \t")):], "none")
}

func describeSpace(ws, none string) string {
	tabs, spaces := strings.Count(ws, "\t"), strings.Count(ws, " ")
	switch {
	case tabs == 0 && spaces == 0:
		return none
	case tabs == 0:
		return plural(spaces, "space")
	case spaces == 0:
		return plural(tabs, "tab")
	case strings.HasPrefix(ws, "\t"):
		return plural(tabs, "tab") + " then " + plural(spaces, "space")
	default:
		return plural(spaces, "space") + " then " + plural(tabs, "tab")
	}
}

// quotesOf lists the distinct quote characters of s, in order, quoted.
func quotesOf(s string) string {
	var seen []string
	for _, r := range s {
		if isDoubleQuote(r) || isSingleQuote(r) || r == '`' {
			q := fmt.Sprintf("%q", string(r))
			if r == '\'' {
				q = `"'"`
			}
			if !slices.Contains(seen, q) {
				seen = append(seen, q)
			}
		}
	}
	if len(seen) == 0 {
		return "no quotes"
	}
	return strings.Join(seen, " and ")
}

// wordChange words the tokens that differ between line o of old_string
// and line f of the file, aligned by their longest common subsequence.
// For an edge line, text the file's line has beyond old_string's
// fragment is not a difference.
func wordChange(n int, o, f string, edge bool) string {
	to, tf := tokens(normLine(o)), tokens(normLine(f))
	// Longest common subsequence table, from the end.
	l := make([][]int, len(to)+1)
	for i := range l {
		l[i] = make([]int, len(tf)+1)
	}
	for i := len(to) - 1; i >= 0; i-- {
		for j := len(tf) - 1; j >= 0; j-- {
			if to[i] == tf[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	type change struct{ old, file []string }
	var changes []change
	var cur change
	flush := func(atEdge bool) {
		if len(cur.old) > 0 || (len(cur.file) > 0 && !(edge && atEdge)) {
			changes = append(changes, cur)
		}
		cur = change{}
	}
	i, j := 0, 0
	started := false
	for i < len(to) || j < len(tf) {
		switch {
		case i < len(to) && j < len(tf) && to[i] == tf[j]:
			flush(!started)
			started = true
			i++
			j++
		case j < len(tf) && (i == len(to) || l[i][j+1] >= l[i+1][j]):
			cur.file = append(cur.file, tf[j])
			j++
		default:
			cur.old = append(cur.old, to[i])
			i++
		}
	}
	flush(true)
	if len(changes) == 0 {
		return ""
	}
	var parts []string
	for k, c := range changes {
		if k == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(changes)-3))
			break
		}
		switch {
		case len(c.old) == 0:
			parts = append(parts, fmt.Sprintf("the file has %q that old_string lacks", strings.Join(c.file, " ")))
		case len(c.file) == 0:
			parts = append(parts, fmt.Sprintf("old_string has %q that the file lacks", strings.Join(c.old, " ")))
		default:
			parts = append(parts, fmt.Sprintf("the file has %q where old_string has %q", strings.Join(c.file, " "), strings.Join(c.old, " ")))
		}
	}
	return fmt.Sprintf("line %d: %s", n, strings.Join(parts, "; "))
}

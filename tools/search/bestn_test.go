package search

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

type rank int

func (a rank) compare(b rank) int { return cmp.Compare(a, b) }

// TestBestN keeps exactly the n least of what was added, in any order of
// adding, bounded or not.
func TestBestN(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{-1, 0, 1, 3, 100} {
		for _, count := range []int{0, 1, 2, 5, 50, 500} {
			var all []rank
			var h bestN[rank]
			for range count {
				x := rank(rng.IntN(40)) // repeats included
				all = append(all, x)
				h.add(x, n)
			}
			slices.Sort(all)
			want := all
			if n >= 0 && len(want) > n {
				want = want[:n]
			}
			got := slices.Clone(h.items)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("n=%d, %d added: kept %v, want %v", n, count, got, want)
			}
		}
	}
}

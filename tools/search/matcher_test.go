package search

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestMatcherLiterals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		pattern   string
		fold      bool
		needles   []string // "" entries mean: no prefilter
		lineExact bool
		single    bool
	}{
		{"plain_literal", "ErrNotExist", false, []string{"ErrNotExist"}, true, true},
		{"case_insensitive_literal", "deadline", true, []string{"deadline"}, true, true},
		{"alternation_of_literals", "ErrClosed|ErrTimeout|ErrNoProgress", false, []string{"ErrClosed", "ErrTimeout", "ErrNoProgress"}, true, false},
		{"optional_letter_expands", "colou?r", false, []string{"color", "colour"}, true, false},
		{"class_with_required_literal", `[A-Z][a-z]+Error\(`, false, []string{"Error("}, false, false},
		{"word_boundaries_need_the_regexp", `\bfoo\b`, false, []string{"foo"}, false, false},
		{"anchor_needs_the_regexp", `^package`, false, []string{"package"}, false, false},
		{"plus_keeps_its_literal", `(ab)+c`, false, []string{"ab"}, false, false},
		{"fold_with_k_is_cut_before_k", "deadlock", true, []string{"deadloc"}, false, false},
		{"fold_with_s_keeps_longest_safe_part", "mutexes", true, []string{"mutexe"}, false, false},
		{"no_literal_no_prefilter", `\w+\d`, false, nil, false, false},
		{"star_no_prefilter", `a*`, false, nil, false, false},
		{"empty_pattern_no_prefilter", ``, false, nil, false, false},
		{"small_class_is_a_set", `[xy]z`, false, []string{"xz", "yz"}, true, false},
		// A product too large to spell out restarts the run, which then
		// stands for its tail only: it may filter lines, never prove them.
		{"too_large_a_product_is_not_exact", `[ab][cd][ef][gh][ij][kl][mn]`, false, nil, false, false},
		{"mixed_folding_is_not_exact", `0A?0`, true, []string{"0"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := compileMatcher(tc.pattern, tc.fold, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if m.pf != nil {
				for _, n := range m.pf.needles {
					got = append(got, string(n.lit))
				}
			}
			want := slices.Clone(tc.needles)
			if tc.fold {
				for i := range want {
					want[i] = strings.ToLower(want[i])
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("needles = %q, want %q", got, want)
			}
			if m.lineExact != tc.lineExact || m.single != tc.single {
				t.Fatalf("lineExact, single = %v, %v; want %v, %v", m.lineExact, m.single, tc.lineExact, tc.single)
			}
		})
	}
}

func TestMatcherErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, pattern string
		multiline     bool
		want          string
	}{
		{"unclosed_group", "(foo", false, "missing closing )"},
		{"bad_repeat", "a**", false, "invalid nested repetition"},
		{"lookahead_is_not_re2", "foo(?=bar)", false, "invalid or unsupported Perl syntax"},
		{"newline_without_multiline", "foo\nbar", false, "multiline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileMatcher(tc.pattern, false, tc.multiline)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := compileMatcher("foo\nbar", false, true); err != nil {
		t.Fatalf("a newline is fine in multiline mode: %v", err)
	}
}

func TestPrefilterScan(t *testing.T) {
	t.Parallel()
	pf, _ := newPrefilter([]lit{{s: "needle", fold: true}, {s: "pin"}})
	h := []byte("hay NEEDLE hay pin hay nEeDlE pins")
	sc := pf.newScan(h)
	var got []string
	for from := 0; ; {
		s, e := sc.next(from)
		if s < 0 {
			break
		}
		got = append(got, string(h[s:e]))
		from = e
	}
	want := []string{"NEEDLE", "pin", "nEeDlE", "pin"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
}

// TestScanFindsEveryOccurrence compares the prefilter's scan (two bytes
// of the needle tested 32 positions at a time with AVX2 or a word at a
// time without; bytes.IndexByte for one-byte needles) with a naive
// search, on random texts full of near misses.
func TestScanFindsEveryOccurrence(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"context", "CONTEXT", "ConText", "contex", "ontext", "x", "X", "c", "\n", " ", "Error", "error", "a1", "A1", "\xff", "conTEXT\n"}
	for _, tc := range []struct {
		needle string
		fold   bool
	}{{"context", true}, {"context", false}, {"error", true}, {"a1", true}, {"x", true}, {"Error", false}, {"t\nc", true}} {
		n := makeNeedle([]byte(strings.ToLower(tc.needle)), tc.fold)
		if !tc.fold {
			n = makeNeedle([]byte(tc.needle), false)
		}
		// The same needle scanned a word at a time, as without AVX2.
		word := n
		if n.pair != nil {
			p := *n.pair
			p.simd = false
			word.pair = &p
		}
		for round := range 400 {
			n := n
			if round%4 >= 2 {
				n = word
			}
			pf := &prefilter{needles: []needle{n}}
			var b strings.Builder
			for range rng.IntN([]int{80, 800}[round%2]) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			h := []byte(b.String())
			var want []int
			for i := range h {
				if n.verify(h, i) {
					want = append(want, i)
				}
			}
			var got []int
			sc := pf.newScan(h)
			for from := 0; ; {
				s, _ := sc.next(from)
				if s < 0 {
					break
				}
				got = append(got, s)
				from = s + 1
			}
			if !slices.Equal(got, want) {
				t.Fatalf("needle %q fold %v round %d in %q:\n got  %v\n want %v", tc.needle, tc.fold, round, h, got, want)
			}
		}
	}
}

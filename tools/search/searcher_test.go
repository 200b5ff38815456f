package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// referenceGrep is the obvious, slow implementation of content mode for a
// single file: split into lines, run the regexp on each, add context.
// The searcher must print exactly the same lines.
func referenceGrep(data string, re *regexp.Regexp, before, after int, onlyMatching bool) []string {
	if data == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	matched := make([]bool, len(lines))
	for i, l := range lines {
		matched[i] = re.MatchString(l)
		if onlyMatching {
			// With -o a line whose matches are all empty shows nothing
			// and counts as not matching.
			matched[i] = false
			for _, m := range re.FindAllString(l, -1) {
				matched[i] = matched[i] || m != ""
			}
		}
	}
	show := func(text string) string {
		text = strings.TrimSuffix(text, "\r")
		if n := len([]rune(text)); n > maxLineChars {
			return fmt.Sprintf("[long line omitted: %d characters]", n)
		}
		return text
	}
	var out []string
	last := -1 // index of the last printed line
	for i := range lines {
		isCtx := false
		if !matched[i] {
			for k := 1; k <= before && i+k < len(lines); k++ {
				if matched[i+k] {
					isCtx = true
				}
			}
			for k := 1; k <= after && i-k >= 0; k++ {
				if matched[i-k] {
					isCtx = true
				}
			}
			if !isCtx {
				continue
			}
		}
		var entries []string
		if matched[i] && onlyMatching {
			for _, m := range re.FindAllString(lines[i], -1) {
				if m != "" {
					entries = append(entries, fmt.Sprintf("%d:%s", i+1, show(m)))
				}
			}
		} else if matched[i] {
			entries = []string{fmt.Sprintf("%d:%s", i+1, show(lines[i]))}
		} else {
			entries = []string{fmt.Sprintf("%d-%s", i+1, show(lines[i]))}
		}
		if len(entries) == 0 {
			continue
		}
		if (before > 0 || after > 0) && last >= 0 && last != i-1 {
			out = append(out, "--")
		}
		out = append(out, entries...)
		last = i
	}
	return out
}

// searchOne runs the searcher over one file in content mode.
func searchOne(t *testing.T, path string, m *matcher, before, after int, onlyMatching bool) []string {
	t.Helper()
	opt := searchOptions{mode: modeContent, before: before, after: after, lineNumbers: true, onlyMatching: onlyMatching, retainCap: -1}
	res := &fileResult{abs: path}
	newSearcher(m, opt, nil).searchFile(path, res)
	if res.err != nil {
		t.Fatal(res.err)
	}
	out := strings.Split(strings.TrimSuffix(string(res.out), "\n"), "\n")
	if len(res.out) == 0 {
		out = nil
	}
	if len(out) != res.entries {
		t.Fatalf("entries = %d but %d lines retained", res.entries, len(out))
	}
	return out
}

// makeText builds text of n lines from a small vocabulary, with some
// long lines, empty lines and CRLF endings mixed in.
func makeText(rng *rand.Rand, n int, longEvery int) string {
	words := []string{"alpha", "beta", "Gamma", "delta", "ERROR", "error", "Kelvin", "kelvin", "ſtraße", "foo", "bar(", "x", "{", "}"}
	var b strings.Builder
	for i := range n {
		if longEvery > 0 && i%longEvery == longEvery-1 {
			b.WriteString(strings.Repeat("long-", 150) + "error")
		} else if rng.IntN(10) > 0 {
			for k := range 1 + rng.IntN(8) {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rng.IntN(len(words))])
			}
		}
		if rng.IntN(20) == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestSearcherMatchesReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 9))
	dir := t.TempDir()
	small := makeText(rng, 300, 37)
	// Bigger than the read buffer, so lines and context cross refills.
	big := makeText(rng, 14_000, 3000)
	noFinalNewline := strings.TrimSuffix(small, "\n")
	files := map[string]string{"small": small, "big": big, "nofinal": noFinalNewline, "empty": ""}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	patterns := []struct {
		pattern string
		fold    bool
	}{
		{"error", false},
		{"error", true},
		{"kelvin", true}, // k folds to the Kelvin sign too
		{"straße", true}, // s folds to the long s
		{"alpha|beta", false},
		{"ERROR|Gamma", true},
		{`\bfoo\b`, false},
		{`bar\(`, false},
		{`^alpha`, false},
		{`delta$`, false},
		{`[A-Z]\w+`, false},
		{`x\s+\{`, false},
		{`colou?r|er+or`, false},
		{`.`, false},
		{``, false},
	}
	contexts := [][2]int{{0, 0}, {2, 0}, {0, 3}, {1, 1}, {4, 4}}
	for name, content := range files {
		for i, p := range patterns {
			if name == "big" && i%4 != 0 {
				continue // the big file is slow to check; a sample of patterns covers refills
			}
			m, err := compileMatcher(p.pattern, p.fold, false)
			if err != nil {
				t.Fatal(err)
			}
			re := m.re
			for _, c := range contexts {
				for _, only := range []bool{false, true} {
					if only && p.pattern == "." {
						continue // one entry per character: slow and says nothing new
					}
					if name == "big" && (only != (c[0] == 1)) {
						continue // a sample of the option combinations on the big file
					}
					t.Run(fmt.Sprintf("%s/%q-i=%v/B%dA%d/o=%v", name, p.pattern, p.fold, c[0], c[1], only), func(t *testing.T) {
						t.Parallel()
						want := referenceGrep(content, re, c[0], c[1], only)
						got := searchOne(t, filepath.Join(dir, name), m, c[0], c[1], only)
						if len(got) != len(want) {
							t.Fatalf("got %d lines, want %d\nfirst difference: %s", len(got), len(want), firstDiff(got, want))
						}
						if d := firstDiff(got, want); d != "" {
							t.Fatal(d)
						}
					})
				}
			}
		}
	}
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got  %q\n want %q", i, g, w)
		}
	}
	return ""
}

func TestSearcherCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("foo foo\nbar\nfoo\n"), 0o644)
	for _, tc := range []struct {
		name    string
		pattern string
		only    bool
		want    int
	}{
		{"matching_lines", "foo", false, 2},
		{"occurrences_with_o", "foo", true, 3},
		{"regexp_occurrences_with_o", "f.o", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := compileMatcher(tc.pattern, false, false)
			if err != nil {
				t.Fatal(err)
			}
			res := &fileResult{}
			newSearcher(m, searchOptions{mode: modeCount, onlyMatching: tc.only, retainCap: -1}, nil).searchFile(path, res)
			if res.count != tc.want {
				t.Fatalf("count = %d, want %d", res.count, tc.want)
			}
		})
	}
}

func TestSearcherBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	early := filepath.Join(dir, "early")
	os.WriteFile(early, []byte("match\x00 here\nmatch\n"), 0o644)
	late := filepath.Join(dir, "late")
	// NUL after the first 64KB: the text before it is searched, then the
	// search stops (ripgrep's behaviour).
	os.WriteFile(late, []byte(strings.Repeat("match\n", 20000)+"mat\x00ch\nmatch\n"), 0o644)
	m, _ := compileMatcher("match", false, false)
	for _, tc := range []struct {
		name string
		path string
		want int
	}{
		{"nul_in_first_block_skips_file", early, 0},
		{"nul_later_stops_before_its_line", late, 20000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &fileResult{}
			newSearcher(m, searchOptions{mode: modeCount, retainCap: -1}, nil).searchFile(tc.path, res)
			if res.count != tc.want {
				t.Fatalf("count = %d, want %d", res.count, tc.want)
			}
		})
	}
}

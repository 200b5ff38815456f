package search

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// dfaLines returns the indexes of the lines of text that the lineDFA
// finds matching, scanning text as one buffer.
func dfaLines(t testing.TB, d *lineDFA, text []byte) []int {
	t.Helper()
	var out []int
	for pos := 0; pos < len(text); {
		ls, le, ok := d.find(text, pos, len(text))
		if !ok {
			break
		}
		out = append(out, bytes.Count(text[:ls], []byte{'\n'}))
		if le < ls || (le < len(text) && text[le] != '\n') {
			t.Fatalf("find returned a line [%d,%d) that does not end at a newline", ls, le)
		}
		pos = le + 1
	}
	return out
}

// regexpLines returns the indexes of the lines Go's regexp matches, each
// line searched alone.
func regexpLines(re *regexp.Regexp, text []byte) []int {
	var out []int
	if len(text) == 0 {
		return nil // an empty file has no lines
	}
	lines := bytes.Split(text, []byte{'\n'})
	if len(text) > 0 && text[len(text)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, i)
		}
	}
	return out
}

func newTestDFA(t testing.TB, expr string) (*lineDFA, *regexp.Regexp) {
	t.Helper()
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		t.Fatal(err)
	}
	return newLineDFA(prog), re
}

func checkDFA(t testing.TB, expr string, text []byte) {
	t.Helper()
	d, re := newTestDFA(t, expr)
	got, want := dfaLines(t, d, text), regexpLines(re, text)
	if !slicesEqual(got, want) {
		t.Fatalf("pattern %q on %q:\n dfa    lines %v\n regexp lines %v", expr, text, got, want)
	}
	// Line by line too, as the prefilter path calls it.
	for i, l := range bytes.Split(bytes.TrimSuffix(text, []byte{'\n'}), []byte{'\n'}) {
		if d.matchLine(l) != re.Match(l) {
			t.Fatalf("pattern %q, line %d %q: matchLine %v, regexp %v", expr, i, l, d.matchLine(l), re.Match(l))
		}
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var dfaPatterns = []string{
	`\w+\d{3}\s*\(`, `[A-Z][a-z]+Error\b`, `(?i)context`, `(?i)straße`, `(?i)k`, `^$`, `^`, `$`, `^\s*$`,
	`^func`, `\)$`, `\bx1\b`, `\Bor\B`, `a|b|^c|d$`, `x*`, `(a+)+b`, `[^a-z]{2,3}`, `.`, `^.{3}$`,
	`é+`, `[α-ω]+\d`, `\pL\d`, `[^\x00-\x7f]`, `\x{FFFD}`, `(?i)ǅ`, `a.c`, `(?:ab|cd)*ef`, `\S+\s\S+$`,
	`\b`, `\B`, `^\b`, `\b$`, `(?i)[k-m]+`, `\r$`, `\t`, `(foo|foobar)baz`, `a{0,3}b{2}`,
}

var dfaTexts = []string{
	"",
	"\n",
	"\n\n\n",
	"no newline at end",
	"func main() {\n\tx := sha256(buf)\n\treturn Uint64 (y)\n}\n",
	"type MyError struct{}\nvar e = NotAnError\nErrorf(\"x\")\nUnexpectedError\n",
	"CONTEXT\ncontext.Context\nConText\nnothing\n",
	"STRASSE straße STRAẞE\n",
	"\u212a kelvin\nK k\n",
	"x1 x12 ax1 x1b\n(x1)\n",
	"word or  for\nabor\n",
	"café éé\n\xff\xfe invalid \xc3\n\xe2\x82\n",
	"αβγ1 δ 2\n\u01c5 \u01c4 \u01c6\n",
	"abc\r\nabd\r\n",
	"foobarbaz foobaz\n  \n\t\n",
	"aabb aaaabb ab\nbb\n",
}

// TestLineDFAMatchesRegexp checks the automaton against Go's regexp on
// every pattern × text pair, and on random texts.
func TestLineDFAMatchesRegexp(t *testing.T) {
	t.Parallel()
	for _, p := range dfaPatterns {
		for _, text := range dfaTexts {
			checkDFA(t, p, []byte(text))
		}
		checkDFA(t, p, []byte(strings.Join(dfaTexts, "")))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "c", "x1", "(", ")", " ", "\t", "\n", "\n", "Error", "K", "k", "é", "\xff", "1", "234", "_", "\r"}
	for _, p := range dfaPatterns {
		for range 20 {
			var b strings.Builder
			for range rng.IntN(60) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			checkDFA(t, p, []byte(b.String()))
		}
	}
}

// TestLineDFAFlush makes an automaton outgrow its cache (a pattern whose
// DFA has many states) and checks the answers stay right.
func TestLineDFAFlush(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for range 4000 {
		for range rng.IntN(40) {
			b.WriteByte("ab"[rng.IntN(2)])
		}
		b.WriteByte('\n')
	}
	expr := `a[ab]{12}b`
	d, re := newTestDFA(t, expr)
	text := []byte(b.String())
	got, want := dfaLines(t, d, text), regexpLines(re, text)
	if !slicesEqual(got, want) {
		t.Fatalf("after %d flushes: dfa lines differ from regexp (%d vs %d lines)", d.resets, len(got), len(want))
	}
	if d.resets == 0 {
		t.Fatalf("the cache was never flushed (%d states): the test does not test flushing", len(d.states))
	}
}

// FuzzLineDFA compares the automaton with Go's regexp on arbitrary
// patterns and texts.
func FuzzLineDFA(f *testing.F) {
	for i, p := range dfaPatterns {
		f.Add(p, dfaTexts[i%len(dfaTexts)])
	}
	f.Fuzz(func(t *testing.T, expr, text string) {
		if len(expr) > 64 || len(text) > 512 {
			return
		}
		if _, err := regexp.Compile(expr); err != nil {
			return
		}
		checkDFA(t, expr, []byte(text))
	})
}

// searchLines returns the indexes of the lines of text the searcher's
// line search (prefilter, reverse-suffix automaton, forward automaton)
// finds matching.
func searchLines(t testing.TB, m *matcher, text []byte) []int {
	t.Helper()
	s := newSearcher(m, searchOptions{mode: modeCount}, nil)
	if s.sc != nil {
		s.sc.reset(text)
	}
	var out []int
	for pos := 0; pos < len(text); {
		ls, le, ok := s.nextMatchingLine(text, pos, len(text))
		if !ok {
			break
		}
		out = append(out, bytes.Count(text[:ls], []byte{'\n'}))
		pos = le + 1
	}
	return out
}

func checkSearch(t testing.TB, pattern string, fold bool, text []byte) *matcher {
	t.Helper()
	m, err := compileMatcher(pattern, fold, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := searchLines(t, m, text), regexpLines(m.re, text); !slicesEqual(got, want) {
		t.Fatalf("pattern %q (fold %v, reverse suffix %v) on %q:\n search lines %v\n regexp lines %v", pattern, fold, m.rprog != nil, text, got, want)
	}
	return m
}

// TestReverseSuffixMatchesRegexp checks the lines found by reading back
// from a pattern's last literal against Go's regexp, on patterns that
// end in a literal.
func TestReverseSuffixMatchesRegexp(t *testing.T) {
	t.Parallel()
	patterns := []string{
		`\w+\d{3}\s*\(`, `[A-Z][a-z]+Error`, `\bx\d\(`, `^\s*func`, `^ab`, `\Bor`, `(?:a|b)*ab`, `$x`, `\d+\.\d+`,
		`é+x1`, `[^a-z]K`, `(?i)[a-z]+ontext`, `(?i)\bconText`, `.\(`, `^\(`, `\b\(`, `x*y*\(`, `\pL\d{2}Error`,
		// Conditions after the literal.
		`[A-Z][a-z]+Error\b`, `\w+x1\b`, `\d\(\B`, `a+b$`, `é\wé$`, `(?i)\w+ext\b$`, `\s+_\B`,
	}
	texts := append(slices.Clone(dfaTexts), "sha256(x) int64( Uint128 (\nfoo123(a, b)\n  func main\nfunc\n", "aabab\nbbab ab\nab\n",
		"1.25 v1.2 .5\n", "ééx1 éx1\n", "xK aK\n", "CONTEXT MyContext\n my ConText xconText\n", "((\n(\n a(\nxy(\n",
		"MyErrorf x1b\nAnError\nax1 bx1y\nbx1y\nbéxé\n1(2 1(\naab\naabx\n")
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "b", "x1", "(", ")", " ", "\t", "\n", "Error", "K", "k", "é", "\xff", "1", "234", "_", "func", "ConText", "."}
	for range 30 {
		var b strings.Builder
		for range rng.IntN(80) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	reversed := 0
	for _, p := range patterns {
		for _, text := range texts {
			if m := checkSearch(t, p, false, []byte(text)); m.rprog != nil && text == texts[0] {
				reversed++
			}
		}
	}
	if reversed < len(patterns)/2 {
		t.Fatalf("only %d of %d patterns took the reverse-suffix path: the test does not test it", reversed, len(patterns))
	}
}

// FuzzSearchLines compares the searcher's line search with Go's regexp
// on arbitrary patterns and texts.
func FuzzSearchLines(f *testing.F) {
	for i, p := range append(slices.Clone(dfaPatterns), `\w+\d{3}\s*\(`, `[a-z]\bfoo`, `(?i)k\w*x`, `[A-Z][a-z]+Error\b`, `\w+x1\b$`) {
		f.Add(p, dfaTexts[i%len(dfaTexts)], i%3 == 0)
	}
	f.Fuzz(func(t *testing.T, pattern, text string, fold bool) {
		if len(pattern) > 64 || len(text) > 512 {
			return
		}
		if _, err := regexp.Compile(pattern); err != nil {
			return
		}
		if _, err := compileMatcher(pattern, fold, false); err != nil {
			return // refused, e.g. a newline outside multiline mode
		}
		if re, err := syntax.Parse(pattern, syntax.Perl); err != nil || literalHas(re, utf8.RuneError) {
			// A literal U+FFFD is searched as its UTF-8 bytes, as ripgrep
			// does; Go's regexp also takes each invalid byte for one.
			return
		}
		checkSearch(t, pattern, fold, []byte(text))
	})
}

// literalHas reports whether a literal in re holds r.
func literalHas(re *syntax.Regexp, r rune) bool {
	if re.Op == syntax.OpLiteral && slices.Contains(re.Rune, r) {
		return true
	}
	for _, sub := range re.Sub {
		if literalHas(sub, r) {
			return true
		}
	}
	return false
}

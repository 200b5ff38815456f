package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// matcher is a compiled Grep pattern: Go's regexp (RE2 syntax) plus a
// literal prefilter that finds candidate positions without the regexp.
type matcher struct {
	re *regexp.Regexp
	// pf finds the literals every match must contain; nil when the
	// pattern has no such literal (the regexp then runs on every line).
	pf *prefilter
	// lineExact: a line matches iff pf finds one of its needles in it, so
	// the regexp need not confirm.
	lineExact bool
	// single: the pattern matches exactly pf's one needle, so match spans
	// are the needle's occurrences.
	single    bool
	multiline bool
	// prog is the compiled program each searcher builds its lineDFA
	// from; nil with multiline, whose matches span lines.
	prog *syntax.Prog
	// rprog, when set, is the reversed program of what precedes the
	// pattern's last element, the literal pf finds: a line matches when,
	// read backwards from an occurrence of that literal, rprog matches
	// (see newReverseDFA).
	rprog *syntax.Prog
	// rafter are the empty-width conditions (\b, \B, $) the pattern
	// puts right after that literal.
	rafter syntax.EmptyOp
}

// Limits of literal extraction: sets larger than this are not worth
// scanning for one needle at a time.
const (
	maxLiteralSet   = 64
	maxPrefilterSet = 12
)

// compileMatcher compiles pattern. caseInsensitive adds (?i); multiline
// lets patterns span lines with . matching newlines and ^/$ at line
// boundaries.
func compileMatcher(pattern string, caseInsensitive, multiline bool) (*matcher, error) {
	flags := ""
	if caseInsensitive {
		flags += "i"
	}
	if multiline {
		flags += "ms"
	}
	expr := pattern
	if flags != "" {
		expr = "(?" + flags + ")" + pattern
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "error parsing regexp: ")
		return nil, fmt.Errorf("invalid regular expression %q: %s (Go RE2 syntax; escape special characters such as ( [ { . * + ? with a backslash to search for them literally)", pattern, msg)
	}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	parsed = parsed.Simplify()
	if !multiline && hasLiteralNewline(parsed) {
		return nil, fmt.Errorf("pattern %q contains a newline, which can never match within a single line: set multiline to true to search across lines", pattern)
	}
	m := &matcher{re: re, multiline: multiline}
	if !multiline {
		if m.prog, err = syntax.Compile(parsed); err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
		}
	}
	info := analyze(parsed)
	set, exact := info.exact, true
	if set == nil || set.hasEmpty() {
		set, exact = info.required, false
	}
	if set != nil && !set.hasEmpty() && len(set.lits) <= maxPrefilterSet {
		pf, precise := newPrefilter(set.lits)
		if pf != nil {
			m.pf = pf
			m.lineExact = exact && precise && !multiline
			m.single = m.lineExact && len(pf.needles) == 1
			if !m.lineExact && !multiline && precise && len(pf.needles) == 1 {
				m.rprog, m.rafter = reverseSuffixProg(parsed, &pf.needles[0])
			}
		}
	}
	return m, nil
}

// reverseSuffixProg returns, when re is a concatenation ending in the
// literal n finds (then possibly \b, \B or $), the program of what
// precedes the literal reversed, and the empty-width conditions that
// must hold right after the literal; else nil.
func reverseSuffixProg(re *syntax.Regexp, n *needle) (*syntax.Prog, syntax.EmptyOp) {
	if re.Op != syntax.OpConcat {
		return nil, 0
	}
	subs := re.Sub
	var after syntax.EmptyOp
	for len(subs) > 0 {
		switch subs[len(subs)-1].Op {
		case syntax.OpWordBoundary:
			after |= syntax.EmptyWordBoundary
		case syntax.OpNoWordBoundary:
			after |= syntax.EmptyNoWordBoundary
		case syntax.OpEndText:
			after |= syntax.EmptyEndText
		default:
			goto literal
		}
		subs = subs[:len(subs)-1]
	}
literal:
	if len(subs) < 2 || subs[len(subs)-1].Op != syntax.OpLiteral {
		return nil, 0
	}
	last := subs[len(subs)-1]
	l := normLit(string(last.Rune), last.Flags&syntax.FoldCase != 0)
	want := l.s
	if l.fold {
		want = strings.ToLower(want)
	}
	if l.fold != n.fold || want != string(n.lit) {
		return nil, 0
	}
	prefix := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs[:len(subs)-1]}
	prog, err := syntax.Compile(reverseRegexp(prefix))
	if err != nil {
		return nil, 0
	}
	return prog, after
}

// reverseRegexp returns re reversed: it matches the reverse of each
// string re matches, in the mirrored context (^ and $ swap; \b and \B
// look at both sides and stay).
func reverseRegexp(re *syntax.Regexp) *syntax.Regexp {
	out := &syntax.Regexp{Op: re.Op, Flags: re.Flags, Min: re.Min, Max: re.Max, Cap: re.Cap, Name: re.Name}
	switch re.Op {
	case syntax.OpLiteral:
		out.Rune = slices.Clone(re.Rune)
		slices.Reverse(out.Rune)
	case syntax.OpCharClass:
		out.Rune = slices.Clone(re.Rune)
	case syntax.OpBeginLine:
		out.Op = syntax.OpEndLine
	case syntax.OpEndLine:
		out.Op = syntax.OpBeginLine
	case syntax.OpBeginText:
		out.Op = syntax.OpEndText
	case syntax.OpEndText:
		out.Op = syntax.OpBeginText
	}
	for _, sub := range re.Sub {
		out.Sub = append(out.Sub, reverseRegexp(sub))
	}
	if re.Op == syntax.OpConcat {
		slices.Reverse(out.Sub)
	}
	return out
}

// hasLiteralNewline reports whether re requires a literal '\n'.
func hasLiteralNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	if re.Op == syntax.OpCharClass && len(re.Rune) == 2 && re.Rune[0] == '\n' && re.Rune[1] == '\n' {
		return true
	}
	for _, s := range re.Sub {
		if hasLiteralNewline(s) {
			return true
		}
	}
	return false
}

// lit is one literal string; fold marks ASCII case-insensitive matching.
type lit struct {
	s    string
	fold bool
}

// litSet is a set of literals.
type litSet struct{ lits []lit }

func (ls *litSet) hasEmpty() bool {
	for _, l := range ls.lits {
		if l.s == "" {
			return true
		}
	}
	return false
}

func (ls *litSet) minLen() int {
	m := -1
	for _, l := range ls.lits {
		if m < 0 || len(l.s) < m {
			m = len(l.s)
		}
	}
	return m
}

// better reports whether a is a better prefilter than b: longer shortest
// literal first, then fewer literals.
func better(a, b *litSet) bool {
	if b == nil {
		return true
	}
	am, bm := min(a.minLen(), 8), min(b.minLen(), 8)
	if am != bm {
		return am > bm
	}
	return len(a.lits) < len(b.lits)
}

// litInfo is what analysis learns about a sub-expression.
type litInfo struct {
	// exact, when set, is the finite set of strings the expression matches.
	exact *litSet
	// required, when set, holds literals one of which every match contains.
	required *litSet
	// zeroWidth: the expression is an assertion that consumes nothing.
	zeroWidth bool
}

func normLit(s string, fold bool) lit {
	if fold {
		hasLetter := false
		for i := 0; i < len(s); i++ {
			c := s[i] | 0x20
			if (c >= 'a' && c <= 'z') || s[i] >= utf8.RuneSelf {
				hasLetter = true
				break
			}
		}
		fold = hasLetter
	}
	return lit{s: s, fold: fold}
}

// analyze computes literal information for re.
func analyze(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		l := normLit(string(re.Rune), re.Flags&syntax.FoldCase != 0)
		set := &litSet{lits: []lit{l}}
		return litInfo{exact: set, required: set}
	case syntax.OpCharClass:
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 4 {
				return litInfo{}
			}
		}
		set := &litSet{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set.lits = append(set.lits, lit{s: string(r)})
			}
		}
		return litInfo{exact: set, required: set}
	case syntax.OpEmptyMatch:
		return litInfo{exact: &litSet{lits: []lit{{}}}}
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{zeroWidth: true}
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpQuest:
		sub := analyze(re.Sub[0])
		if sub.exact != nil && len(sub.exact.lits) < maxLiteralSet {
			set := &litSet{lits: append([]lit{{}}, sub.exact.lits...)}
			return litInfo{exact: set}
		}
		return litInfo{}
	case syntax.OpPlus:
		sub := analyze(re.Sub[0])
		return litInfo{required: sub.requiredSet()}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			sub := analyze(re.Sub[0])
			return litInfo{required: sub.requiredSet()}
		}
		return litInfo{}
	case syntax.OpConcat:
		return analyzeConcat(re.Sub)
	case syntax.OpAlternate:
		return analyzeAlternate(re.Sub)
	}
	return litInfo{}
}

func (li litInfo) requiredSet() *litSet {
	if li.exact != nil && !li.exact.hasEmpty() {
		return li.exact
	}
	if li.required != nil && !li.required.hasEmpty() {
		return li.required
	}
	return nil
}

// analyzeConcat builds runs of exact sets by cross product and keeps the
// best required set seen.
func analyzeConcat(subs []*syntax.Regexp) litInfo {
	run := &litSet{lits: []lit{{}}}
	allExact := true
	var best *litSet
	consider := func(s *litSet) {
		if s != nil && !s.hasEmpty() && better(s, best) {
			best = s
		}
	}
	for _, sub := range subs {
		info := analyze(sub)
		if info.zeroWidth {
			allExact = false
			continue
		}
		if info.exact != nil {
			if next, ok := cross(run, info.exact); ok {
				run = next
				continue
			}
			// The run restarts here, so it no longer spells the whole
			// concatenation.
			allExact = false
			consider(run)
			run = info.exact
			continue
		}
		allExact = false
		consider(run)
		run = &litSet{lits: []lit{{}}}
		consider(info.required)
	}
	consider(run)
	out := litInfo{required: best}
	if allExact {
		out.exact = run
	}
	return out
}

// cross concatenates every literal of a with every literal of b; ok is
// false when the result would be too large or would mix case folding.
func cross(a, b *litSet) (*litSet, bool) {
	if len(a.lits)*len(b.lits) > maxLiteralSet {
		return nil, false
	}
	out := &litSet{lits: make([]lit, 0, len(a.lits)*len(b.lits))}
	for _, x := range a.lits {
		for _, y := range b.lits {
			if x.s != "" && y.s != "" && x.fold != y.fold {
				return nil, false
			}
			out.lits = append(out.lits, lit{s: x.s + y.s, fold: x.fold || y.fold})
		}
	}
	return out, true
}

func analyzeAlternate(subs []*syntax.Regexp) litInfo {
	exact := &litSet{}
	required := &litSet{}
	for _, sub := range subs {
		info := analyze(sub)
		if exact != nil {
			if info.exact != nil && len(exact.lits)+len(info.exact.lits) <= maxLiteralSet {
				exact.lits = append(exact.lits, info.exact.lits...)
			} else {
				exact = nil
			}
		}
		if required != nil {
			if r := info.requiredSet(); r != nil && len(required.lits)+len(r.lits) <= maxLiteralSet {
				required.lits = append(required.lits, r.lits...)
			} else {
				required = nil
			}
		}
	}
	return litInfo{exact: exact, required: required}
}

// needle is one literal the prefilter scans for. It is found by looking
// for its rarest byte with bytes.IndexByte (both cases when folding), then
// comparing the rest.
type needle struct {
	lit    []byte // lower-cased when fold
	fold   bool
	rare   int  // offset of the rare byte in lit
	b1, b2 byte // the rare byte's variants (equal when not a letter)
	// pair, set for needles of two bytes or more, finds the needle by
	// testing two of its bytes (the rare one and the next rarest) at
	// every position: 32 positions at a time with AVX2, else a word at a
	// time, in which case it is used only for case-folded needles (it
	// replaces two streams of bytes.IndexByte calls, one per case, each
	// stopping at every occurrence of a common letter). A candidate then
	// needs both bytes right, so verify runs far less often than after
	// an IndexByte hit on one byte.
	pair *bytePair
}

// bytePair tests, eight positions at a time, whether the bytes at two
// offsets of a needle match, case-insensitively where they are letters.
type bytePair struct {
	off1, off2 int
	or1, or2   uint64 // 0x20 in every byte for a letter (folds case), else 0
	want1      uint64 // the lower-cased byte in every byte
	want2      uint64
	// masks are or1, want1, or2, want2 as single bytes, for
	// pairIndexAVX2, which tests 32 positions at a time when simd is set
	// (on amd64 processors with AVX2).
	masks [4]byte
	simd  bool
}

// prefilter finds the first occurrence of any of its needles.
type prefilter struct{ needles []needle }

// newPrefilter turns literals into needles. precise is false when a
// literal had to be shortened (Unicode case folding), so a needle hit no
// longer proves a match.
func newPrefilter(lits []lit) (*prefilter, bool) {
	pf := &prefilter{}
	precise := true
	seen := map[string]bool{}
	for _, l := range lits {
		s := l.s
		if l.fold {
			cut := foldSafeSegment(s)
			if cut != s {
				precise = false
			}
			s = strings.ToLower(cut)
		}
		if s == "" {
			return nil, false
		}
		key := fmt.Sprint(l.fold, s)
		if seen[key] {
			continue
		}
		seen[key] = true
		pf.needles = append(pf.needles, makeNeedle([]byte(s), l.fold))
	}
	return pf, precise
}

// foldSafeSegment returns the longest part of s that ASCII case folding
// handles exactly: no non-ASCII bytes, and no k or s (which also fold to
// the Kelvin sign and the long s).
func foldSafeSegment(s string) string {
	bestStart, bestLen := 0, 0
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] >= utf8.RuneSelf || s[i]|0x20 == 'k' || s[i]|0x20 == 's' {
			if i-start > bestLen {
				bestStart, bestLen = start, i-start
			}
			start = i + 1
		}
	}
	return s[bestStart : bestStart+bestLen]
}

func makeNeedle(b []byte, fold bool) needle {
	n := needle{lit: b, fold: fold}
	bestScore := 1 << 30
	for i, c := range b {
		score := byteRank(c)
		if fold && isASCIILetter(c) {
			score += byteRank(c^0x20) + 40 // two scans
		}
		if score < bestScore {
			bestScore, n.rare = score, i
		}
	}
	n.b1, n.b2 = b[n.rare], b[n.rare]
	if fold && isASCIILetter(n.b1) {
		n.b2 = n.b1 ^ 0x20
	}
	if len(b) >= 2 && (useAVX2 || n.b2 != n.b1) {
		n.pair = newBytePair(b, n.rare, fold)
	}
	return n
}

// newBytePair pairs the byte at off1 of the lower-cased needle b with
// its next rarest byte.
func newBytePair(b []byte, off1 int, fold bool) *bytePair {
	off2, best := -1, 1<<30
	for i, c := range b {
		if i == off1 {
			continue
		}
		score := byteRank(c)
		if fold && isASCIILetter(c) {
			score += byteRank(c ^ 0x20)
		}
		if score < best {
			off2, best = i, score
		}
	}
	p := &bytePair{off1: off1, off2: off2}
	p.or1, p.want1 = foldWord(b[off1], fold)
	p.or2, p.want2 = foldWord(b[off2], fold)
	p.masks = [4]byte{byte(p.or1), byte(p.want1), byte(p.or2), byte(p.want2)}
	p.simd = useAVX2
	return p
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// foldWord returns the mask that folds c's case in every byte of a word
// (none without fold or when c is not a letter), and c in every byte.
func foldWord(c byte, fold bool) (or, want uint64) {
	if fold && isASCIILetter(c) {
		return 0x20 * lowBits, uint64(c|0x20) * lowBits
	}
	return 0, uint64(c) * lowBits
}

// pairFind returns the first start at or after from where n occurs in h,
// or -1.
func (n *needle) pairFind(h []byte, from int) int {
	p := n.pair
	last := len(h) - len(n.lit) // the last possible start
	hi := max(p.off1, p.off2) + 8
	i := from
	if p.simd {
		for i <= last {
			c, next := pairIndexAVX2(h[i:], p.off1, p.off2, &p.masks)
			if c < 0 {
				i += next // the rest is left to the loops below
				break
			}
			if at := i + c; n.verify(h, at) {
				return at
			}
			i += c + 1
		}
	}
	for ; i <= last && i+hi <= len(h); i += 8 {
		w1 := binary.LittleEndian.Uint64(h[i+p.off1:]) | p.or1
		w2 := binary.LittleEndian.Uint64(h[i+p.off2:]) | p.or2
		x := (w1 ^ p.want1) | (w2 ^ p.want2) // zero bytes where both match
		// A set high bit marks a zero byte (or a byte just above one: the
		// borrow; verify sorts those out).
		for z := (x - lowBits) &^ x & highBits; z != 0; z &= z - 1 {
			at := i + bits.TrailingZeros64(z)/8
			if at <= last && n.verify(h, at) {
				return at
			}
		}
	}
	for ; i <= last; i++ {
		if n.verify(h, i) {
			return i
		}
	}
	return -1
}

func isASCIILetter(c byte) bool { c |= 0x20; return c >= 'a' && c <= 'z' }

// byteRank approximates how common a byte is in source code and text
// (higher is more common); the prefilter scans for the rarest byte.
func byteRank(c byte) int {
	const common = "etaoinsrhldcumfpgwybvkxjqz"
	switch {
	case c == ' ' || c == '\n' || c == '\t':
		return 255
	case c >= 'a' && c <= 'z':
		return 250 - 3*strings.IndexByte(common, c)
	case c >= 'A' && c <= 'Z':
		return 160 - 2*strings.IndexByte(common, c|0x20)
	case c >= '0' && c <= '9':
		return 150
	case strings.IndexByte(`.,;:()"'=_-/*{}`, c) >= 0:
		return 200
	case c < utf8.RuneSelf:
		return 110
	default:
		return 60
	}
}

// verify reports whether n occurs at h[at:].
func (n *needle) verify(h []byte, at int) bool {
	if at < 0 || at+len(n.lit) > len(h) {
		return false
	}
	w := h[at : at+len(n.lit)]
	if !n.fold {
		return bytes.Equal(w, n.lit)
	}
	for i, c := range w {
		if c >= 'A' && c <= 'Z' {
			c |= 0x20
		}
		if c != n.lit[i] {
			return false
		}
	}
	return true
}

// scan holds a prefilter's progress over one haystack, so that finding
// the next candidate never rescans bytes already looked at.
type scan struct {
	pf  *prefilter
	h   []byte
	pos [][2]int // per needle: next position of b1 and b2 (-1 none, -2 unknown)
	hit []int    // per needle: next verified start (-1 none, -2 unknown)
}

func (pf *prefilter) newScan(h []byte) *scan {
	s := &scan{pf: pf, h: h, pos: make([][2]int, len(pf.needles)), hit: make([]int, len(pf.needles))}
	for i := range s.hit {
		s.hit[i] = -2
		s.pos[i] = [2]int{-2, -2}
	}
	return s
}

// reset starts over on a new haystack, keeping the allocations.
func (s *scan) reset(h []byte) {
	s.h = h
	for i := range s.hit {
		s.hit[i] = -2
		s.pos[i] = [2]int{-2, -2}
	}
}

// next returns the start and end of the first needle occurrence at or
// after from, or -1.
func (s *scan) next(from int) (int, int) {
	best, bestEnd := -1, -1
	for i := range s.pf.needles {
		if s.hit[i] == -1 {
			continue
		}
		if s.hit[i] < from {
			s.hit[i] = s.find(i, from)
			if s.hit[i] < 0 {
				continue
			}
		}
		if best < 0 || s.hit[i] < best {
			best, bestEnd = s.hit[i], s.hit[i]+len(s.pf.needles[i].lit)
		}
	}
	return best, bestEnd
}

// find locates needle i at or after from.
func (s *scan) find(i, from int) int {
	n := &s.pf.needles[i]
	if n.pair != nil {
		return n.pairFind(s.h, from)
	}
	p := &s.pos[i]
	min := from + n.rare // the rare byte of a hit at from or later
	for {
		for v, b := range [2]byte{n.b1, n.b2} {
			if v == 1 && n.b2 == n.b1 {
				p[1] = -1
				break
			}
			if p[v] == -1 || p[v] >= min {
				continue
			}
			if min >= len(s.h) {
				p[v] = -1
				continue
			}
			j := bytes.IndexByte(s.h[min:], b)
			if j < 0 {
				p[v] = -1
			} else {
				p[v] = min + j
			}
		}
		at := p[0]
		if at < 0 || (p[1] >= 0 && p[1] < at) {
			at = p[1]
		}
		if at < 0 {
			return -1
		}
		start := at - n.rare
		if n.verify(s.h, start) {
			return start
		}
		min = at + 1
	}
}

// spans returns the non-empty match spans in line, relative to it.
func (m *matcher) spans(line []byte, sc *scan) [][2]int {
	var out [][2]int
	if m.single {
		sc.reset(line)
		for from := 0; ; {
			s, e := sc.next(from)
			if s < 0 {
				return out
			}
			out = append(out, [2]int{s, e})
			from = e
		}
	}
	for _, loc := range m.re.FindAllIndex(line, -1) {
		if loc[1] > loc[0] {
			out = append(out, [2]int{loc[0], loc[1]})
		}
	}
	return out
}

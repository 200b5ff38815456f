package fs

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// editSpec is one replacement of Edit or MultiEdit.
type editSpec struct {
	Old        string `json:"old_string"`
	New        string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// matchError says why an edit's old_string could not be placed.
type matchError struct {
	// count is 0 for no match, or the number of matches when more than one
	// was found and replace_all was not set.
	count int
	// strict is true when only exact, unique matches were allowed because
	// the file changed since the caller read it.
	strict bool
}

func (e *matchError) Error() string {
	if e.count == 0 {
		return "old_string was not found"
	}
	return fmt.Sprintf("old_string occurs %d times", e.count)
}

// editApplied describes a successful replacement.
type editApplied struct {
	body  []byte
	count int // replacements made
	// spans are the replaced byte ranges in the input body.
	spans [][2]int
	// quotes is true when old_string matched only once curly and straight
	// quotes were treated alike.
	quotes bool
}

// applyEdit replaces e.Old by e.New in body, the text of a file in format
// f (UTF-8, its own line endings). old_string must occur exactly once
// unless e.ReplaceAll. Matching tries, in order:
//
//  1. old_string with the file's line endings (a model writes LF; a CRLF
//     file stays CRLF, and so does new_string written into it);
//  2. old_string as given (files with mixed line endings);
//  3. each of those with curly and straight quotes treated alike, the
//     replacement then taking the quote style of the text it replaces.
//
// With strict set (the file changed since it was read) only steps 1 and 2
// apply and exactly one match is required even with replace_all: the edit
// must still apply unambiguously to text the caller has not seen.
//
// body is not modified; the result is a new slice.
func applyEdit(body []byte, f textFormat, e editSpec, strict bool) (*editApplied, error) {
	if e.Old == "" {
		return nil, errors.New("old_string is empty")
	}
	type variant struct{ old, new string }
	var variants []variant
	if f.crlf {
		variants = append(variants, variant{toCRLF(e.Old), toCRLF(e.New)})
		if strings.Contains(e.Old, "\n") {
			variants = append(variants, variant{e.Old, e.New})
		}
	} else {
		variants = append(variants, variant{e.Old, e.New})
		if strings.Contains(e.Old, "\r\n") {
			variants = append(variants, variant{toLF(e.Old), toLF(e.New)})
		}
	}

	// Exact matches.
	for _, v := range variants {
		limit := 2
		if e.ReplaceAll && !strict {
			limit = -1
		}
		spans := findExact(body, []byte(v.old), limit)
		if len(spans) == 0 {
			continue
		}
		if len(spans) > 1 && (!e.ReplaceAll || strict) {
			return nil, &matchError{count: bytes.Count(body, []byte(v.old)), strict: strict}
		}
		return &editApplied{body: splice(body, spans, func(int) string { return v.new }), count: len(spans), spans: spans}, nil
	}
	if strict {
		return nil, &matchError{strict: true}
	}

	// Quote-tolerant matches.
	for _, v := range variants {
		re := quoteTolerant(v.old)
		if re == nil {
			continue
		}
		limit := 2
		if e.ReplaceAll {
			limit = -1
		}
		spans := re.findAll(body, limit)
		if len(spans) == 0 {
			continue
		}
		if len(spans) > 1 && !e.ReplaceAll {
			return nil, &matchError{count: len(re.findAll(body, -1))}
		}
		repl := func(i int) string {
			m := body[spans[i][0]:spans[i][1]]
			return adaptQuotes(v.new, v.old, string(m))
		}
		return &editApplied{body: splice(body, spans, repl), count: len(spans), spans: spans, quotes: true}, nil
	}
	return nil, &matchError{}
}

// findExact returns the non-overlapping occurrences of old in body, left to
// right, at most limit of them (all when limit < 0).
func findExact(body, old []byte, limit int) [][2]int {
	var spans [][2]int
	for at := 0; limit < 0 || len(spans) < limit; {
		i := bytes.Index(body[at:], old)
		if i < 0 {
			break
		}
		start := at + i
		spans = append(spans, [2]int{start, start + len(old)})
		at = start + len(old)
	}
	return spans
}

// splice builds body with each span i replaced by repl(i), in one
// allocation of the final size.
func splice(body []byte, spans [][2]int, repl func(i int) string) []byte {
	news := make([]string, len(spans))
	size := len(body)
	for i, s := range spans {
		news[i] = repl(i)
		size += len(news[i]) - (s[1] - s[0])
	}
	out := make([]byte, 0, size)
	at := 0
	for i, s := range spans {
		out = append(out, body[at:s[0]]...)
		out = append(out, news[i]...)
		at = s[1]
	}
	return append(out, body[at:]...)
}

const (
	curlyDoubleOpen  = '\u201c' // “
	curlyDoubleClose = '\u201d' // ”
	curlySingleOpen  = '\u2018' // ‘
	curlySingleClose = '\u2019' // ’
)

func isDoubleQuote(r rune) bool {
	return r == '"' || r == curlyDoubleOpen || r == curlyDoubleClose
}

func isSingleQuote(r rune) bool {
	return r == '\'' || r == curlySingleOpen || r == curlySingleClose
}

// quoteMatcher finds text equal to a pattern in which each quote, curly or
// straight, matches any quote of its kind. It works on bytes, so files and
// strings that are not valid UTF-8 match byte for byte.
type quoteMatcher struct {
	segs []quoteSeg
}

// quoteSeg is a literal run of bytes, or (when class is set) one quote.
type quoteSeg struct {
	lit   []byte
	class [][]byte // the encodings the quote may take
}

var (
	doubleQuotes = [][]byte{[]byte(`"`), []byte("\u201c"), []byte("\u201d")}
	singleQuotes = [][]byte{[]byte(`'`), []byte("\u2018"), []byte("\u2019")}
)

// quoteTolerant builds the matcher for old; nil when old has no quotes.
func quoteTolerant(old string) *quoteMatcher {
	m := &quoteMatcher{}
	lit := 0
	quotes := false
	for i, r := range old {
		var class [][]byte
		switch {
		case isDoubleQuote(r):
			class = doubleQuotes
		case isSingleQuote(r):
			class = singleQuotes
		default:
			continue
		}
		quotes = true
		if i > lit {
			m.segs = append(m.segs, quoteSeg{lit: []byte(old[lit:i])})
		}
		m.segs = append(m.segs, quoteSeg{class: class})
		lit = i + utf8.RuneLen(r)
	}
	if !quotes {
		return nil
	}
	if lit < len(old) {
		m.segs = append(m.segs, quoteSeg{lit: []byte(old[lit:])})
	}
	return m
}

// matchAt returns the end of a match starting at i, or -1.
func (m *quoteMatcher) matchAt(body []byte, i int) int {
	for _, s := range m.segs {
		if s.class == nil {
			if !bytes.HasPrefix(body[i:], s.lit) {
				return -1
			}
			i += len(s.lit)
			continue
		}
		matched := false
		for _, q := range s.class {
			if bytes.HasPrefix(body[i:], q) {
				i += len(q)
				matched = true
				break
			}
		}
		if !matched {
			return -1
		}
	}
	return i
}

// candidate returns the first position at or after at where a match could
// start, or -1.
func (m *quoteMatcher) candidate(body []byte, at int) int {
	first := m.segs[0]
	if first.class == nil {
		if i := bytes.Index(body[at:], first.lit); i >= 0 {
			return at + i
		}
		return -1
	}
	best := -1
	for _, q := range first.class {
		if i := bytes.IndexByte(body[at:], q[0]); i >= 0 && (best < 0 || at+i < best) {
			best = at + i
		}
	}
	return best
}

// findAll returns the leftmost non-overlapping matches, at most limit of
// them (all when limit < 0).
func (m *quoteMatcher) findAll(body []byte, limit int) [][2]int {
	var spans [][2]int
	for at := 0; at <= len(body) && (limit < 0 || len(spans) < limit); {
		i := m.candidate(body, at)
		if i < 0 {
			break
		}
		if end := m.matchAt(body, i); end >= 0 {
			spans = append(spans, [2]int{i, end})
			at = end
		} else {
			at = i + 1
		}
	}
	return spans
}

// adaptQuotes gives newS the quote style of matched, the file's text that
// oldS matched only by treating curly and straight quotes alike: where the
// file has curly quotes and the caller wrote straight ones, the straight
// quotes of newS become curly (opening or closing by position), and the
// reverse.
func adaptQuotes(newS, oldS, matched string) string {
	fileCurlyD := strings.ContainsAny(matched, "\u201c\u201d")
	fileCurlyS := strings.ContainsAny(matched, "\u2018\u2019")
	callerStraightD := strings.Contains(oldS, `"`)
	callerStraightS := strings.Contains(oldS, `'`)
	callerCurlyD := strings.ContainsAny(oldS, "\u201c\u201d")
	callerCurlyS := strings.ContainsAny(oldS, "\u2018\u2019")
	fileStraightD := strings.Contains(matched, `"`)
	fileStraightS := strings.Contains(matched, `'`)

	curlD := fileCurlyD && callerStraightD
	curlS := fileCurlyS && callerStraightS
	straightD := !curlD && fileStraightD && callerCurlyD
	straightS := !curlS && fileStraightS && callerCurlyS
	if !curlD && !curlS && !straightD && !straightS {
		return newS
	}
	rs := []rune(newS)
	for i, r := range rs {
		var prev, next rune = -1, -1
		if i > 0 {
			prev = rs[i-1]
		}
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case curlD && r == '"':
			rs[i] = pickQuote(prev, curlyDoubleOpen, curlyDoubleClose)
		case curlS && r == '\'':
			if unicode.IsLetter(prev) && unicode.IsLetter(next) {
				rs[i] = curlySingleClose // an apostrophe: don't, it's
			} else {
				rs[i] = pickQuote(prev, curlySingleOpen, curlySingleClose)
			}
		case straightD && (r == curlyDoubleOpen || r == curlyDoubleClose):
			rs[i] = '"'
		case straightS && (r == curlySingleOpen || r == curlySingleClose):
			rs[i] = '\''
		}
	}
	return string(rs)
}

// pickQuote chooses the opening quote at the start of text or after space
// or an opening bracket, and the closing one otherwise.
func pickQuote(prev, open, close rune) rune {
	if prev < 0 || unicode.IsSpace(prev) || strings.ContainsRune("([{<\u2014\u2013", prev) || prev == curlyDoubleOpen || prev == curlySingleOpen {
		return open
	}
	return close
}

// describeMatchError words a matchError for an edit of old in the file
// abs, whose text is body; other errors pass through. When old_string is
// not found, the error shows where the file nearly matches it (nearMiss).
func describeMatchError(err error, abs string, body []byte, old string) error {
	var me *matchError
	if !errors.As(err, &me) {
		return err
	}
	switch {
	case me.strict && me.count == 0:
		return fmt.Errorf("%s has changed on disk since you last read it, and old_string is no longer found in it exactly: Read it again, then retry", abs)
	case me.strict:
		return fmt.Errorf("%s has changed on disk since you last read it, and old_string now occurs %d times in it: Read it again, then retry with enough context to pick one", abs, me.count)
	case me.count == 0:
		if hint := nearMiss(body, old); hint != "" {
			return fmt.Errorf("old_string was not found in %s. It must match the file's text exactly, including whitespace and indentation, without the line-number prefixes Read shows.%s", abs, hint)
		}
		return fmt.Errorf("old_string was not found in %s. It must match the file's text exactly, including whitespace and indentation, without the line-number prefixes Read shows; Read the file again if you are unsure what it holds", abs)
	default:
		return fmt.Errorf("old_string occurs %d times in %s, but without replace_all it must occur exactly once: add surrounding lines to old_string to make it unique, or set replace_all to true to replace every occurrence", me.count, abs)
	}
}

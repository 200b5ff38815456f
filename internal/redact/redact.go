// Package redact replaces the secrets agent-mcp knows in text before it
// leaves the server: a tool result, a progress message, a persisted
// result's file.
//
// A [Redactor] is built once from named values ([Secret]). Each value is
// searched for as written and in the encodings a command prints it in
// without trying to hide it: base64 (standard and URL-safe, at each of
// the three alignments a value can have inside a longer encoded stream),
// hexadecimal (lower and upper case), URL-encoding and JSON string
// escaping. Whitespace (spaces, tabs, line breaks) is skipped while
// matching, so a value that `base64` or `xxd -p` wrapped over two lines,
// or `od -An -tx1` spaced into bytes, is still found. Every match, with
// whatever overlaps it, is replaced by a marker naming where the value
// came from: [redacted: GITHUB_TOKEN].
//
// What it cannot do: a value transformed in any other way (reversed,
// split by other characters, compressed, enciphered) is not recognised,
// and a value shorter than [MinLen] is never searched for.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// MinLen is the shortest value searched for: shorter ones ("1", "true",
// a port) would replace ordinary text everywhere.
const MinLen = 8

// Secret is one value to redact and the name its marker shows (a
// variable's name, a file's path).
type Secret struct {
	Name, Value string
}

// Redactor finds and replaces a fixed set of secrets. It is safe for
// concurrent use; the zero value and nil redact nothing.
type Redactor struct {
	needles [][]byte // whitespace-free forms of the values
	names   []string // needles[i] came from the secret named names[i]
	// filter has a bit set for the hash of every needle's first
	// keyLen bytes: most positions of a text are rejected by one load.
	filter []uint64
	byKey  map[uint32][]int32
	maxLen int
	// patterns are regular expressions whose matches (group 1 where
	// there is one) are redacted too ([Redactor.WithPatterns]).
	patterns []Pattern
}

// Pattern is a regular expression to redact the matches of (its group 1
// where it has one), under Name. A match is found across the reads of
// [Redactor.Reader] when it is at most [MaxPatternMatch] bytes long.
type Pattern struct {
	Name string
	Re   *regexp.Regexp
}

// MaxPatternMatch is the longest match of a [Pattern] that a streamed
// text is sure to have redacted, wherever its reads were cut.
const MaxPatternMatch = 512

// WithPatterns returns r (a new Redactor when r is nil) that also
// redacts the matches of pats.
func (r *Redactor) WithPatterns(pats []Pattern) *Redactor {
	if r == nil {
		r = New(nil)
	}
	r.patterns = append(r.patterns, pats...)
	if len(r.patterns) > 0 {
		r.maxLen = max(r.maxLen, MaxPatternMatch)
	}
	return r
}

const (
	keyLen     = 4
	filterBits = 16
)

// New builds a Redactor for secrets. Values shorter than [MinLen] are
// left out; a value given twice keeps its first name.
func New(secrets []Secret) *Redactor {
	r := &Redactor{filter: make([]uint64, 1<<filterBits/64), byKey: map[uint32][]int32{}}
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s.Value) < MinLen {
			continue
		}
		for _, form := range forms(s.Value) {
			n := stripSpace([]byte(form))
			if len(n) < keyLen || seen[string(n)] {
				continue
			}
			seen[string(n)] = true
			k := key(n)
			r.filter[hash(k)/64] |= 1 << (hash(k) % 64)
			r.byKey[k] = append(r.byKey[k], int32(len(r.needles)))
			r.needles = append(r.needles, n)
			r.names = append(r.names, s.Name)
			r.maxLen = max(r.maxLen, len(n))
		}
	}
	// Longest first among candidates with the same key.
	for k, ids := range r.byKey {
		slices.SortFunc(ids, func(a, b int32) int { return len(r.needles[b]) - len(r.needles[a]) })
		r.byKey[k] = ids
	}
	return r
}

// Len is how many searched forms the Redactor holds (0 for nil).
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	return len(r.needles) + len(r.patterns)
}

// forms are the ways value is searched for: as it is and encoded.
func forms(v string) []string {
	out := []string{v, hex.EncodeToString([]byte(v)), strings.ToUpper(hex.EncodeToString([]byte(v))),
		url.QueryEscape(v), url.PathEscape(v), strings.ReplaceAll(url.QueryEscape(v), "+", "%20")}
	if j, err := json.Marshal(v); err == nil {
		out = append(out, string(j[1:len(j)-1]))
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) == nil {
		j := bytes.TrimSpace(b.Bytes())
		out = append(out, string(j[1:len(j)-1]))
	}
	out = append(out, asciiJSON(v))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for phase := range 3 {
			out = append(out, base64Core(enc, v, phase))
		}
	}
	return out
}

// asciiJSON is v JSON-escaped the way Python's json.dumps does by
// default: every non-ASCII character as \uXXXX.
func asciiJSON(v string) string {
	j, _ := json.Marshal(v)
	s := string(j[1 : len(j)-1])
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xFFFF:
			b.WriteString(`\u` + hex4(r))
		default:
			r -= 0x10000
			b.WriteString(`\u` + hex4(0xD800+(r>>10)) + `\u` + hex4(0xDC00+(r&0x3FF)))
		}
	}
	return b.String()
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&0xF], digits[r>>8&0xF], digits[r>>4&0xF], digits[r&0xF]})
}

// base64Core is the part of the base64 encoding of v, preceded by phase
// other bytes in the same stream, that depends on v's bytes alone: the
// characters wholly inside v's bits, whatever came before or after.
func base64Core(enc *base64.Encoding, v string, phase int) string {
	s := enc.EncodeToString(append(make([]byte, phase), v...))
	from := (8*phase + 5) / 6
	to := 8 * (phase + len(v)) / 6
	return s[from:to]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func stripSpace(b []byte) []byte {
	out := b[:0]
	for _, c := range b {
		if !isSpace(c) {
			out = append(out, c)
		}
	}
	return out
}

func key(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func hash(k uint32) uint32 { return (k * 2654435761) >> (32 - filterBits) }

// span is a matched range of the original text and the secret's name.
type span struct {
	from, to int
	name     string
}

// scratch holds the whitespace-free copy of a text and where each of its
// bytes was.
type scratch struct {
	canon []byte
	pos   []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// find returns the merged spans of text holding a secret.
func find[T string | []byte](r *Redactor, text T) []span {
	if r.Len() == 0 || len(text) < keyLen {
		return nil
	}
	spans := findValues(r, text)
	if len(r.patterns) == 0 {
		return spans
	}
	return mergeSpans(append(spans, findPatterns(r, string(text))...))
}

// findPatterns are the spans of text the patterns match.
func findPatterns(r *Redactor, text string) []span {
	var out []span
	for _, p := range r.patterns {
		for _, m := range p.Re.FindAllStringSubmatchIndex(text, -1) {
			from, to := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				from, to = m[2], m[3]
			}
			if to > from {
				out = append(out, span{from, to, p.Name})
			}
		}
	}
	return out
}

// mergeSpans sorts spans and merges those that overlap.
func mergeSpans(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var out []span
	for _, sp := range spans {
		if l := len(out) - 1; l >= 0 && sp.from < out[l].to {
			out[l].to = max(out[l].to, sp.to)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// findValues returns the merged spans of text holding a secret value.
func findValues[T string | []byte](r *Redactor, text T) []span {
	if len(r.needles) == 0 {
		return nil
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	canon, pos := sc.canon[:0], sc.pos[:0]
	for i := range len(text) {
		if c := text[i]; !isSpace(c) {
			canon = append(canon, c)
			pos = append(pos, int32(i))
		}
	}
	sc.canon, sc.pos = canon, pos
	var spans []span
	for i := 0; i+keyLen <= len(canon); i++ {
		k := uint32(canon[i]) | uint32(canon[i+1])<<8 | uint32(canon[i+2])<<16 | uint32(canon[i+3])<<24
		h := hash(k)
		if r.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, id := range r.byKey[k] {
			n := r.needles[id]
			if bytes.HasPrefix(canon[i:], n) {
				from, to := int(pos[i]), int(pos[i+len(n)-1])+1
				if l := len(spans) - 1; l >= 0 && from < spans[l].to {
					spans[l].to = max(spans[l].to, to)
				} else {
					spans = append(spans, span{from, to, r.names[id]})
				}
				break // the longest at i
			}
		}
	}
	return spans
}

// Marker is what stands in for a value of the secret named name.
func Marker(name string) string { return "[redacted: " + name + "]" }

// String returns s with every secret replaced by its marker, and the
// names of the secrets it found (nil when none: s is then returned as
// it is).
func (r *Redactor) String(s string) (string, []string) {
	spans := find(r, s)
	if len(spans) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	names := render(&b, s, spans)
	return b.String(), names
}

// render writes s with spans replaced and returns the spans' names.
func render(b *strings.Builder, s string, spans []span) []string {
	var names []string
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.from])
		b.WriteString(Marker(sp.name))
		at = sp.to
		if !slices.Contains(names, sp.name) {
			names = append(names, sp.name)
		}
	}
	b.WriteString(s[at:])
	return names
}

// Reader returns a reader of rd's bytes redacted as [Redactor.String]
// does, found across the boundaries of rd's reads: it holds back the
// bytes a value begun at the end of one read could still need. found is
// called with each name it redacts (nil: not told).
func (r *Redactor) Reader(rd io.Reader, found func(name string)) io.Reader {
	if r.Len() == 0 {
		return rd
	}
	return &reader{r: r, src: rd, found: found}
}

type reader struct {
	r     *Redactor
	src   io.Reader
	found func(string)
	buf   []byte // read, not yet redacted
	out   []byte // redacted, not yet returned
	eof   bool
	err   error
}

func (x *reader) Read(p []byte) (int, error) {
	for len(x.out) == 0 {
		if x.eof {
			return 0, x.err
		}
		x.fill()
	}
	n := copy(p, x.out)
	x.out = x.out[n:]
	return n, nil
}

// fill reads one more chunk and moves what can no longer change to out.
func (x *reader) fill() {
	var chunk [32 << 10]byte
	n, err := x.src.Read(chunk[:])
	x.buf = append(x.buf, chunk[:n]...)
	if err != nil {
		x.eof = true
		if err != io.EOF {
			x.err = err
		} else {
			x.err = io.EOF
		}
	}
	spans := find(x.r, x.buf)
	cut := len(x.buf)
	if !x.eof {
		// Keep maxLen-1 non-space bytes (and the space among them):
		// a value that begins there may end in the next read.
		keep := x.r.maxLen - 1
		for cut > 0 && keep > 0 {
			cut--
			if !isSpace(x.buf[cut]) {
				keep--
			}
		}
	}
	var emit []span
	for _, sp := range spans {
		if sp.from >= cut {
			break
		}
		cut = max(cut, sp.to)
		emit = append(emit, sp)
	}
	var b strings.Builder
	names := render(&b, string(x.buf[:cut]), emit)
	if x.found != nil {
		for _, n := range names {
			x.found(n)
		}
	}
	x.out = append(x.out[:0], b.String()...)
	x.buf = append(x.buf[:0], x.buf[cut:]...)
}

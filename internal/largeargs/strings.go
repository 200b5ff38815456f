package largeargs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// newPrefix starts the placeholders of one set: "agent-mcp large ", 128
// random bits in hex, and a space; the set's n-th placeholder follows
// with n.
func newPrefix() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "agent-mcp large " + hex.EncodeToString(b[:]) + " "
}

// Strings is the set of long strings TakeStrings took out of a JSON text,
// each standing in it as a placeholder.
type Strings struct {
	prefix string
	texts  map[string][]byte // the JSON text, quotes included, by placeholder
}

// Len is how many strings were taken.
func (s *Strings) Len() int { return len(s.texts) }

// Text is the JSON text (quotes included, a slice of the input) of the
// string that the placeholder p stands for; ok is false when p is none
// of the set's.
func (s *Strings) Text(p string) (text []byte, ok bool) {
	text, ok = s.texts[p]
	return text, ok
}

// TakeStrings returns raw with each string longer than over bytes (quotes
// included) replaced by a placeholder of a new set, member names too when
// names is true, and the set. ok is false, with nothing returned, when a
// string is not terminated (the decoder refuses the input anyway).
func TakeStrings(raw []byte, over int, names bool) (short []byte, taken *Strings, ok bool) {
	taken = &Strings{prefix: newPrefix(), texts: map[string][]byte{}}
	short, ok = replaceStrings(raw, over, func(text []byte, name bool) []byte {
		if name && !names {
			return text
		}
		p := taken.prefix + strconv.Itoa(len(taken.texts))
		taken.texts[p] = text
		return []byte(`"` + p + `"`) // nothing to escape
	})
	if !ok {
		return nil, nil, false
	}
	return short, taken, true
}

// EmptyStrings returns raw with every string longer than over bytes
// (quotes included, member names too) emptied (""), so that a decoder
// sees the same members, types and syntax errors without the strings'
// text. ok is false, with nil, when a string is not terminated.
func EmptyStrings(raw []byte, over int) ([]byte, bool) {
	return replaceStrings(raw, over, func([]byte, bool) []byte { return []byte(`""`) })
}

// replaceStrings returns the JSON text raw with each string longer than n
// bytes (quotes included) replaced by what with returns for its text,
// quotes included (a slice of raw; with may return it to keep the
// string); name says the string is a member name (a colon follows it).
// Strings are found by their quotes, skipping escaped characters, and
// everything else is copied as it is. It reports false, returning nil,
// when a string is not terminated.
func replaceStrings(raw []byte, n int, with func(text []byte, name bool) []byte) ([]byte, bool) {
	out := make([]byte, 0, 4096)
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out = append(out, raw[i])
			i++
			continue
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		if end-i > n {
			rest := bytes.TrimLeft(raw[end:], " \t\r\n")
			out = append(out, with(raw[i:end:end], len(rest) > 0 && rest[0] == ':')...)
		} else {
			out = append(out, raw[i:end]...)
		}
		i = end
	}
	return out, true
}

package orchestrator

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Inputs over longInputBytes are validated with their long string values
// (a Write's content) left out of the decoded copy: the walk sees a short
// placeholder and checks the string's type and length on its JSON text, so
// validation does not build a second full copy of the input beside the one
// the tool decodes.
const (
	longInputBytes  = 64 << 10
	longStringBytes = 4 << 10
)

// longString is a string value left out of the decoded copy: its JSON text
// (with the quotes) and its length in characters.
type longString struct {
	raw   []byte
	runes int
}

// longStrings maps each placeholder to the string it stands for; nil when
// none was left out.
type longStrings map[string]longString

// value decodes the string a placeholder stands for, for the checks that
// need its text (enums, patterns, formats).
func (ls longString) value() any {
	var s string
	if json.Unmarshal(ls.raw, &s) != nil {
		return ""
	}
	return s
}

// withoutLongStrings returns raw with every string value (not member
// names) longer than longStringBytes replaced by a placeholder, and what
// each placeholder stands for. Placeholders carry a random prefix made
// per call, so no input can spell one. Small inputs come back unchanged.
func withoutLongStrings(raw []byte) ([]byte, longStrings) {
	if len(raw) <= longInputBytes {
		return raw, nil
	}
	prefix := "\x00long-" + tools.RandomID()[:16] + "-"
	var long longStrings
	out := make([]byte, 0, 4096)
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out = append(out, raw[i])
			i++
			continue
		}
		end := tools.JSONStringEnd(raw, i)
		if end < 0 { // unterminated: leave it for the decoder to refuse
			return raw, nil
		}
		j := end - 1 // the closing quote
		rest := bytes.TrimLeft(raw[end:], " \t\r\n")
		isName := len(rest) > 0 && rest[0] == ':'
		if end-i > longStringBytes && !isName {
			if long == nil {
				long = longStrings{}
			}
			key := prefix + strconv.Itoa(len(long))
			long[key] = longString{raw: raw[i:end], runes: jsonStringRunes(raw[i+1 : j])}
			k, _ := json.Marshal(key)
			out = append(out, k...)
		} else {
			out = append(out, raw[i:end]...)
		}
		i = end
	}
	return out, long
}

// jsonStringRunes counts the characters of the string whose JSON text,
// between the quotes, is s, as decoding would give them: an escape is one
// character (a surrogate pair one), an invalid UTF-8 byte one U+FFFD.
func jsonStringRunes(s []byte) int {
	n := 0
	for i := 0; i < len(s); n++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && s[i+1] == 'u':
			r, ok := hex4(s[i+2:])
			i += 6
			if ok && utf16.IsSurrogate(r) && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if r2, ok := hex4(s[i+2:]); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
					i += 6
				}
			}
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			_, size := utf8.DecodeRune(s[i:])
			i += size
		}
	}
	return n
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

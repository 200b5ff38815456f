package largeargs

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// stringEnd returns the index just past the closing quote of the JSON
// string whose opening quote is raw[i], skipping escaped characters, or -1
// when the string is not terminated. It only finds the string's extent:
// whether its contents are valid is left to the decoder.
func stringEnd(raw []byte, i int) int {
	j := i + 1
	for j < len(raw) && raw[j] != '"' {
		if raw[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(raw) {
		return -1
	}
	return j + 1
}

// skipSpace is the index of the first byte of b at or after i that is not
// JSON white space (len(b) when there is none).
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// valueEnd is the index just past the JSON value starting at b[i] (valid).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[j])) {
		j++
	}
	return j
}

// Members is where each top-level member's value of obj, a valid JSON
// object, starts and ends in obj, by name (the last of a repeated name).
// Names are matched exactly, as the MCP SDK's decoder does.
func Members(obj []byte) map[string][2]int {
	m := map[string][2]int{}
	i := skipSpace(obj, 0) + 1 // past '{'
	for {
		i = skipSpace(obj, i)
		switch obj[i] {
		case '}':
			return m
		case ',':
			i = skipSpace(obj, i+1)
		}
		end := stringEnd(obj, i)
		name := jsonName(obj[i:end])
		i = skipSpace(obj, skipSpace(obj, end)+1) // past ':'
		vend := valueEnd(obj, i)
		m[name] = [2]int{i, vend}
		i = vend
	}
}

// jsonName is the text of the JSON string s, quotes included (valid).
func jsonName(s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1])
	}
	var name string
	_ = json.Unmarshal(s, &name)
	return name
}

// Runes counts the characters of the string whose JSON text, between the
// quotes, is s, as decoding would give them: an escape is one character
// (a surrogate pair one), an invalid UTF-8 byte one U+FFFD. It allocates
// nothing.
func Runes(s []byte) int {
	n := 0
	for i := 0; i < len(s); n++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && s[i+1] == 'u':
			r := hex4(s[i+2:])
			i += 6
			if r >= 0 && utf16.IsSurrogate(r) && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if r2 := hex4(s[i+2:]); r2 >= 0 && utf16.DecodeRune(r, r2) != utf8.RuneError {
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

// Unquote is the text of the JSON string q (quotes included), decoded as
// encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD), into one allocation: a strings.Builder's, which its String
// returns without a copy. ok is false if q is not a valid JSON string.
func Unquote(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	s := q[1 : len(q)-1]
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		// Copy a run of bytes that need nothing done at once.
		j := i
		for j < len(s) && s[j] != '\\' && s[j] != '"' && s[j] >= ' ' && s[j] < utf8.RuneSelf {
			j++
		}
		b.Write(s[i:j])
		if i = j; i == len(s) {
			break
		}
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch s[i+1] {
			case '"', '\\', '/':
				b.WriteByte(s[i+1])
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i+2:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if len(s) >= i+6 && s[i] == '\\' && s[i+1] == 'u' {
						if r2 := hex4(s[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
								b.WriteRune(dec)
								i += 6
								continue
							}
						}
					}
					r = unicode.ReplacementChar
				}
				b.WriteRune(r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < ' ':
			return "", false
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(unicode.ReplacementChar)
			} else {
				b.Write(s[i : i+size])
			}
			i += size
		}
	}
	return b.String(), true
}

// hex4 is the rune of the four hex digits b starts with, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

package tools

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// longString is how long a JSON string (quotes included) must be for
// decodeInput to decode it itself.
const longString = 256

// decodeInput decodes raw, a tool's arguments, into in, a pointer to the
// tool's input struct, refusing unknown fields. Each long string (a
// Write's content) is decoded once, straight into the string the input
// keeps: the input is decoded with every long string replaced by a short
// placeholder, then each placeholder is replaced by its string. Where that
// cannot be done exactly as encoding/json would (a long string that is an
// object key, lands in a type that decodes itself, or is not valid), and
// for small inputs, it is the plain two-pass decode (the unknown-field
// check on the input with its long strings emptied, then json.Unmarshal,
// which makes two copies of each string: unescaped bytes, then a string).
func decodeInput(raw []byte, in any) error {
	if len(raw) > 4096 {
		short, long := withPlaceholders(raw)
		if len(long) > 0 {
			dec := json.NewDecoder(bytes.NewReader(short))
			dec.DisallowUnknownFields()
			err := dec.Decode(in)
			// Nothing may follow the object (json.Unmarshal's rule).
			if err == nil && len(bytes.TrimSpace(short[dec.InputOffset():])) == 0 && restoreLong(reflect.ValueOf(in), long) {
				return nil
			}
			reflect.ValueOf(in).Elem().SetZero()
		}
	}
	dec := json.NewDecoder(bytes.NewReader(withoutLongStrings(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(reflect.New(reflect.TypeOf(in).Elem()).Interface()); err != nil {
		return err
	}
	return json.Unmarshal(raw, in)
}

// placeheld is a long string taken out of an input: its JSON text, and
// whether it was put back.
type placeheld struct {
	text  []byte
	found bool
}

// withPlaceholders is raw with each string longer than longString
// replaced by a placeholder that no input holds (it carries a random
// nonce), and the strings taken out, by placeholder.
func withPlaceholders(raw []byte) ([]byte, map[string]*placeheld) {
	nonce := "agent-mcp placeholder " + RandomID() + " "
	long := map[string]*placeheld{}
	out, ok := ReplaceLongStrings(raw, longString, func(text []byte, _ bool) []byte {
		p := nonce + strconv.Itoa(len(long))
		long[p] = &placeheld{text: text}
		return []byte(`"` + p + `"`) // nothing to escape
	})
	if !ok { // unterminated: the plain decode refuses it
		return nil, nil
	}
	return out, long
}

// withoutLongStrings is the JSON text raw with every string longer than
// longString emptied (""), or raw itself when it is small or a string is
// not terminated (the decoder refuses it). The structure is kept as it
// is, so a decoder sees the same fields, types and syntax errors.
func withoutLongStrings(raw []byte) []byte {
	if len(raw) <= 4096 {
		return raw
	}
	out, ok := ReplaceLongStrings(raw, longString, func([]byte, bool) []byte { return []byte(`""`) })
	if !ok {
		return raw
	}
	return out
}

// ReplaceLongStrings returns the JSON text raw with each string longer
// than n bytes (quotes included) replaced by what with returns for its
// text, quotes included (a slice of raw; with may return it to keep the
// string); name says the string is a member name (a colon follows it).
// Strings are found by their quotes, skipping escaped characters, and
// everything else is copied as it is. It reports false, returning nil,
// when a string is not terminated.
func ReplaceLongStrings(raw []byte, n int, with func(text []byte, name bool) []byte) ([]byte, bool) {
	out := make([]byte, 0, 4096)
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out = append(out, raw[i])
			i++
			continue
		}
		end := JSONStringEnd(raw, i)
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

// JSONStringRunes counts the characters of the string whose JSON text,
// between the quotes, is s, as decoding would give them: an escape is one
// character (a surrogate pair one), an invalid UTF-8 byte one U+FFFD. It
// allocates nothing.
func JSONStringRunes(s []byte) int {
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

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// restoreLong puts each long string back where its placeholder was decoded
// into v: a plain string field, slice or array element, map value or
// interface value. It reports false when one cannot be put back exactly
// (a placeholder found elsewhere, or not found, or a string that is not
// valid JSON text).
func restoreLong(v reflect.Value, long map[string]*placeheld) bool {
	ok := walkStrings(v, long)
	for _, p := range long {
		ok = ok && p.found
	}
	return ok
}

// walkStrings replaces the placeholders in v; false means one was found
// where it cannot be replaced.
func walkStrings(v reflect.Value, long map[string]*placeheld) bool {
	if decodesItself(v.Type()) {
		// It may have read the placeholder as it pleased: the plain
		// decode must give it the real text.
		return !holdsPlaceholder(v, long)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
		return walkStrings(v.Elem(), long)
	case reflect.Interface:
		if v.IsNil() {
			return true
		}
		e := v.Elem()
		if e.Kind() == reflect.String {
			s, found, ok := take(e.String(), long)
			if found && ok && v.CanSet() {
				v.Set(reflect.ValueOf(s))
				return true
			}
			return !found
		}
		return walkStrings(e, long)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); v.Type().Field(i).IsExported() && !walkStrings(f, long) {
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if !walkStrings(v.Index(i), long) {
				return false
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k, e := iter.Key(), iter.Value()
			if k.Kind() == reflect.String {
				if _, found := long[k.String()]; found {
					return false // a long key
				}
			}
			switch {
			case e.Kind() == reflect.String || (e.Kind() == reflect.Interface && !e.IsNil() && e.Elem().Kind() == reflect.String):
				str := e
				if e.Kind() == reflect.Interface {
					str = e.Elem()
				}
				s, found, ok := take(str.String(), long)
				if !found {
					continue
				}
				if !ok || decodesItself(str.Type()) {
					return false
				}
				if e.Kind() == reflect.Interface {
					v.SetMapIndex(k, reflect.ValueOf(s))
				} else {
					v.SetMapIndex(k, reflect.ValueOf(s).Convert(e.Type()))
				}
			default:
				// A map's values cannot be changed in place: one holding
				// a placeholder deeper down is left to the plain decode.
				if holdsPlaceholder(e, long) {
					return false
				}
			}
		}
	case reflect.String:
		s, found, ok := take(v.String(), long)
		if !found {
			return true
		}
		if !ok || !v.CanSet() {
			return false
		}
		v.SetString(s)
	}
	return true
}

// decodesItself reports whether encoding/json decodes a value of type t
// by a method of its own.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler)
}

// holdsPlaceholder reports whether a placeholder is anywhere in v.
func holdsPlaceholder(v reflect.Value, long map[string]*placeheld) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && holdsPlaceholder(v.Elem(), long)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && holdsPlaceholder(v.Field(i), long) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if holdsPlaceholder(v.Index(i), long) {
				return true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if holdsPlaceholder(iter.Key(), long) || holdsPlaceholder(iter.Value(), long) {
				return true
			}
		}
	case reflect.String:
		_, found := long[v.String()]
		return found
	}
	return false
}

// take is the string a placeholder stands for: found says s is one (not
// yet put back), ok that its text decoded.
func take(s string, long map[string]*placeheld) (string, bool, bool) {
	p, found := long[s]
	if !found || p.found {
		return "", found, false
	}
	p.found = true
	out, ok := unquoteJSON(p.text)
	return out, true, ok
}

// unquoteJSON is the text of the JSON string q (quotes included), decoded
// as encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD), into one allocation: a strings.Builder's, which its String
// returns without a copy. ok is false if q is not a valid JSON string.
func unquoteJSON(q []byte) (string, bool) {
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

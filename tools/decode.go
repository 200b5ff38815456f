package tools

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
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
		short, long, ok := largeargs.TakeStrings(raw, longString, true)
		if ok && long.Len() > 0 {
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
	check := raw
	if len(raw) > 4096 {
		// The same members, types and syntax errors without the long
		// strings' text.
		if emptied, ok := largeargs.EmptyStrings(raw, longString); ok {
			check = emptied
		}
	}
	dec := json.NewDecoder(bytes.NewReader(check))
	dec.DisallowUnknownFields()
	if err := dec.Decode(reflect.New(reflect.TypeOf(in).Elem()).Interface()); err != nil {
		return err
	}
	return json.Unmarshal(raw, in)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// placed is the long strings taken out of an input, with the placeholders
// already put back.
type placed struct {
	*largeargs.Strings
	found map[string]bool
}

// restoreLong puts each long string back where its placeholder was decoded
// into v: a plain string field, slice or array element, map value or
// interface value. It reports false when one cannot be put back exactly
// (a placeholder found elsewhere, or not found, or a string that is not
// valid JSON text).
func restoreLong(v reflect.Value, strings *largeargs.Strings) bool {
	long := placed{strings, map[string]bool{}}
	return walkStrings(v, long) && len(long.found) == strings.Len()
}

// walkStrings replaces the placeholders in v; false means one was found
// where it cannot be replaced.
func walkStrings(v reflect.Value, long placed) bool {
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
				if _, found := long.Text(k.String()); found {
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
func holdsPlaceholder(v reflect.Value, long placed) bool {
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
		_, found := long.Text(v.String())
		return found
	}
	return false
}

// take is the string a placeholder stands for: found says s is one (not
// yet put back), ok that its text decoded.
func take(s string, long placed) (string, bool, bool) {
	text, found := long.Text(s)
	if !found || long.found[s] {
		return "", found, false
	}
	long.found[s] = true
	out, ok := largeargs.Unquote(text)
	return out, true, ok
}

package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// decodeError says what is wrong with a settings file in its own terms:
// the file, line and column, the key path as the file spells it, and the
// JSON types expected and found (never a Go type or struct field).
func decodeError(name string, data []byte, err error) error {
	return decodeErrorAt(name, data, nil, err)
}

// decodeErrorAt is decodeError for the value at key path at of data,
// decoded on its own (err's offsets count from that value's start).
func decodeErrorAt(name string, data []byte, at []string, err error) error {
	var base int64
	if len(at) > 0 {
		var ok bool
		if base, ok = valueOffset(data, at); !ok {
			return fmt.Errorf("settings %s: %s: %w", name, strings.Join(at, "."), err)
		}
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := strings.Join(append(append([]string{}, at...), te.Field), ".")
		off := base + te.Offset
		if start, ok := valueOffset(data, strings.Split(field, ".")); ok {
			off = start
		}
		line, col := position(data, off)
		return fmt.Errorf("settings %s:%d:%d: %s: expected %s, got %s", name, line, col, field, jsonKind(te.Type), article(te.Value))
	case errors.As(err, &se):
		line, col := position(data, max(base+se.Offset-1, 0))
		return fmt.Errorf("settings %s:%d:%d: not valid JSON: %s", name, line, col, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, int64(len(data)))
		return fmt.Errorf("settings %s:%d:%d: not valid settings JSON: the file ends before its value is complete", name, line, col)
	}
	return fmt.Errorf("settings %s: not valid settings JSON: %w", name, err)
}

// position is the 1-based line and column (in bytes) of data[off].
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// valueOffset finds where the value at the object key path starts.
func valueOffset(data []byte, path []string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for depth := 0; depth < len(path); depth++ {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return 0, false
		}
		for {
			t, err := dec.Token()
			if err != nil {
				return 0, false
			}
			key, ok := t.(string)
			if !ok {
				return 0, false // the object ended without the key
			}
			if key == path[depth] {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, false
			}
		}
	}
	off := dec.InputOffset()
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:", data[off]) >= 0 {
		off++
	}
	return off, true
}

// jsonKind names what a Go type is decoded from, in JSON's words.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if e := jsonKind(t.Elem()); strings.HasPrefix(e, "a ") || strings.HasPrefix(e, "an ") {
			_, noun, _ := strings.Cut(e, " ")
			return "an array of " + noun + "s"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another value"
}

// article puts "a" or "an" before a JSON value kind as encoding/json
// names it ("string", "number", "bool", "array", "object").
func article(v string) string {
	switch v {
	case "bool":
		return "true or false"
	case "array", "object":
		return "an " + v
	case "":
		return "another value"
	}
	return "a " + v
}

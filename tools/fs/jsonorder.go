package fs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// jsonObject is a JSON object that remembers the order of its keys, so a
// notebook rewritten after an edit differs from the original only where the
// edit changed it. Values are *jsonObject, []any, string, json.Number, bool
// or nil.
type jsonObject struct {
	keys []string
	vals map[string]any
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

func (o *jsonObject) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set stores v under k. A new key goes where sorted order puts it when the
// existing keys are sorted (as nbformat writes them), at the end otherwise.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		if slices.IsSorted(o.keys) {
			i, _ := slices.BinarySearch(o.keys, k)
			o.keys = slices.Insert(o.keys, i, k)
		} else {
			o.keys = append(o.keys, k)
		}
	}
	o.vals[k] = v
}

func (o *jsonObject) del(k string) {
	if _, ok := o.vals[k]; ok {
		delete(o.vals, k)
		o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
	}
}

// parseOrderedJSON parses one JSON value keeping object key order and
// numbers as written.
func parseOrderedJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newJSONObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token() // ']'
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// jsonStyle is how a JSON file was laid out: the indent of one level
// ("" for compact output) and whether it ended with a newline.
type jsonStyle struct {
	indent          string
	trailingNewline bool
}

// detectJSONStyle reads the layout of a JSON document: the whitespace
// that starts its second line is one level of indent. Notebooks written by
// Jupyter use one space and end with a newline.
func detectJSONStyle(data []byte) jsonStyle {
	st := jsonStyle{trailingNewline: bytes.HasSuffix(data, []byte("\n"))}
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return st
	}
	rest := data[i+1:]
	n := 0
	for n < len(rest) && (rest[n] == ' ' || rest[n] == '\t') {
		n++
	}
	st.indent = string(rest[:n])
	if st.indent == "" {
		st.indent = " "
	}
	return st
}

// encodeOrderedJSON writes v in style st: like Python's json.dumps with
// that indent and ensure_ascii off (separators ", " and ": ", empty
// containers as [] and {}), which is how nbformat writes notebooks.
func encodeOrderedJSON(v any, st jsonStyle) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, v, st.indent, 0); err != nil {
		return nil, err
	}
	if st.trailingNewline {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any, indent string, depth int) error {
	newline := func(d int) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(indent, d))
		}
	}
	colon, comma := ": ", ","
	if indent == "" {
		colon, comma = ":", ","
	}
	switch t := v.(type) {
	case *jsonObject:
		if len(t.keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteString(comma)
			}
			newline(depth + 1)
			writeJSONString(b, k)
			b.WriteString(colon)
			if err := writeJSON(b, t.vals[k], indent, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte('}')
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteString(comma)
			}
			newline(depth + 1)
			if err := writeJSON(b, e, indent, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte(']')
	case string:
		writeJSONString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("cannot encode %T as notebook JSON", v)
	}
	return nil
}

// writeJSONString writes s as a JSON string without escaping HTML
// characters or non-ASCII text, as Python's json module does.
func writeJSONString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	// (encoding/json also escapes U+2028 and U+2029, which Python keeps
	// as they are; both spellings mean the same string.)
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
}

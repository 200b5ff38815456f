package largeargs

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, "\"\xff\"", `"\"\\\/\b\f\n\r\t"`, `"\u12"`, `"\x"`, "\"a\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		if len(q) == 0 || q[0] != '"' || stringEnd(q, 0) != len(q) {
			return // one JSON string token is what Unquote is given
		}
		var want string
		wantErr := json.Unmarshal(q, &want)
		got, ok := Unquote(q)
		if wantErr == nil && (!ok || got != want) {
			t.Fatalf("Unquote(%q) = %q, %v; encoding/json gives %q", q, got, ok, want)
		}
		if wantErr != nil && ok {
			t.Fatalf("Unquote(%q) = %q, accepted what encoding/json refuses: %v", q, got, wantErr)
		}
	})
}

// TestRunes counts characters on JSON text as decoding does.
func TestRunes(t *testing.T) {
	for _, s := range []string{``, `abc`, `a\nb`, `\"\\\/\b\f\r\t`, `\u00e9`, `\ud83d\ude00`, `\ud83dx`, `\ud83d\u0041`,
		`\udc00\ud800`, `\ud800\ud800\udc00`, "é中😀", "\xff", "\xe4\xb8", "a\xe4\xb8\xadb", `\u12`, `\uzzzz`} {
		var decoded string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &decoded); err != nil {
			continue // not valid JSON: never counted (the full decode refuses it)
		}
		if got, want := Runes([]byte(s)), len([]rune(decoded)); got != want {
			t.Errorf("Runes(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestReplaceStrings finds strings by their quotes (escaped quotes
// inside), replaces only those over the length, tells member names from
// values, and refuses an unterminated string.
func TestReplaceStrings(t *testing.T) {
	t.Parallel()
	mark := func(text []byte, name bool) []byte {
		if name {
			return []byte(`"NAME"`)
		}
		return []byte(`"` + strings.Repeat("x", len(text)-2) + `"`)
	}
	for _, c := range []struct {
		raw, want string
		ok        bool
	}{
		{`{"a":"bc"}`, `{"a":"bc"}`, true},
		{`{"a":"bcdef"}`, `{"a":"xxxxx"}`, true},
		{`{"a":"b\"c\\"}`, `{"a":"xxxxxx"}`, true},
		{`{"abcdef" :"b"}`, `{"NAME" :"b"}`, true},
		{`{"abcdef"` + "\n\t:" + `"b"}`, `{"NAME"` + "\n\t:" + `"b"}`, true},
		{`["abcdef", "abcdefg"]`, `["xxxxxx", "xxxxxxx"]`, true},
		{`{"a":"bcdef`, ``, false},
		{`{"a":"bcd\"}`, ``, false},
		{``, ``, true},
	} {
		got, ok := replaceStrings([]byte(c.raw), 6, mark)
		if ok != c.ok || string(got) != c.want {
			t.Errorf("replaceStrings(%q) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

package tools

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

type upper string

func (u *upper) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*u = upper(strings.ToUpper(s))
	return nil
}

type named string

type edit struct {
	Old string `json:"old_string"`
	New string `json:"new_string"`
}

type decodeCase struct {
	Path    string         `json:"file_path"`
	Content string         `json:"content"`
	Named   named          `json:"named"`
	Ptr     *string        `json:"ptr"`
	Edits   []edit         `json:"edits"`
	Tags    []string       `json:"tags"`
	Any     any            `json:"any"`
	Map     map[string]any `json:"map"`
	Nested  map[string][]string
	Upper   upper           `json:"upper"`
	Raw     json.RawMessage `json:"raw"`
}

// TestDecodeInput decodes inputs with long strings everywhere a tool's
// input may hold them, and some it cannot take from a placeholder: the
// result is always what encoding/json gives, unknown fields are refused.
func TestDecodeInput(t *testing.T) {
	t.Parallel()
	long := func(s string) string { return strings.Repeat(s, 2000/len(s)+1) }
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, c := range []struct{ name, raw string }{
		{"content", `{"file_path":"/a","content":` + q(long("line \"one\"\n\ttab\\ é 😀 \u2028")) + `}`},
		{"escapes_raw", `{"content":"` + long(`\u00e9\ud83d\ude00\ud800x\udc00\n\/\b\f\r\"`) + `"}`},
		{"invalid_utf8", "{\"content\":\"" + long("a\xff\xfeb\xc3") + "\"}"},
		{"everywhere", `{"content":` + q(long("c")) + `,"named":` + q(long("n")) + `,"ptr":` + q(long("p")) +
			`,"edits":[{"old_string":` + q(long("o")) + `,"new_string":` + q(long("w")) + `},{"old_string":"x","new_string":` + q(long("y")) + `}]` +
			`,"tags":[` + q(long("t")) + `,"s"],"any":[` + q(long("a")) + `,{"k":` + q(long("b")) + `}],"map":{"k":` + q(long("m")) + `,"l":[` + q(long("z")) + `]}}`},
		{"same_string_twice", `{"content":` + q(long("same")) + `,"named":` + q(long("same")) + `}`},
		{"self_decoding", `{"content":` + q(long("c")) + `,"upper":` + q(long("up")) + `}`},
		{"raw_message", `{"content":` + q(long("c")) + `,"raw":{"x":` + q(long("r")) + `}}`},
		{"long_key", `{"content":"c","map":{` + q(long("k")) + `:1}}`},
		{"map_of_slices", `{"Nested":{"k":[` + q(long("v")) + `]}}`},
		{"nothing_long", `{"content":"short","tags":[` + strings.Repeat(`"x",`, 2000) + `"y"]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got, want decodeCase
			if err := json.Unmarshal([]byte(c.raw), &want); err != nil {
				t.Fatal(err)
			}
			if err := decodeInput([]byte(c.raw), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decodeInput differs from encoding/json:\n got %.300v\nwant %.300v", got, want)
			}
		})
	}
	t.Run("unknown_field", func(t *testing.T) {
		var got decodeCase
		err := decodeInput([]byte(`{"content":`+q(long("c"))+`,"extra":1}`), &got)
		if err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
			t.Fatalf("an unknown field: %v", err)
		}
	})
	t.Run("wrong_type", func(t *testing.T) {
		var got decodeCase
		err := decodeInput([]byte(`{"content":`+q(long("c"))+`,"tags":`+q(long("t"))+`}`), &got)
		if err == nil || !strings.Contains(err.Error(), "cannot unmarshal string") {
			t.Fatalf("a long string where an array goes: %v", err)
		}
	})
}

// TestDecodeInput_makes_one_copy: a long string costs one allocation of
// its size (encoding/json makes two: unescaped bytes, then the string).
func TestDecodeInput_makes_one_copy(t *testing.T) {
	content := strings.Repeat("an ordinary line of generated content\twith \"quotes\"\n", 200_000) // 10MB
	raw, _ := json.Marshal(map[string]string{"file_path": "/a", "content": content})
	var in decodeCase
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := decodeInput(raw, &in); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if in.Content != content {
		t.Fatal("the content decoded differs")
	}
	// 1.0 and a little for the placeholders' input; the bound leaves room
	// for other work of the process and fails at encoding/json's 2.
	copies := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(content))
	t.Logf("decoding allocated %.2f copies of the content", copies)
	if copies > 1.5 {
		t.Errorf("decoding allocated %.2f copies of the content, want about 1", copies)
	}
}

// TestDecodeInput_odd_inputs: what a model might send to make the tool
// read other arguments than the permission check (which reads the members
// with encoding/json): repeated members, in another case or escaped, long
// strings at the threshold, invalid UTF-8, lone surrogates and trailing
// data. decodeInput accepts and refuses what encoding/json does, with the
// same result.
func TestDecodeInput_odd_inputs(t *testing.T) {
	t.Parallel()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	a, b := q(strings.Repeat("A", 5000)), q(strings.Repeat("B", 5000))
	at := func(n int) string { return q(strings.Repeat("C", n-2)) } // n bytes with the quotes
	for i, raw := range []string{
		`{"content":` + a + `,"content":` + b + `}`,
		`{"content":` + a + `,"CONTENT":` + b + `}`,
		`{"CONTENT":` + a + `,"content":` + b + `}`,
		`{"cont\u0065nt":` + a + `,"content":"x"}`,
		`{"content":"x","cont\u0045nt":` + a + `}`,
		`{"content":null,"content":` + a + `}`,
		`{"content":` + a + `,"content":null}`,
		`{"ptr":` + a + `,"ptr":null}`,
		`{"map":{"k":` + a + `,"k":` + b + `}}`,
		`{"Nested":{"k":[` + a + `],"k":[` + b + `]}}`,
		`{"edits":[{"old_string":` + a + `,"OLD_STRING":` + b + `}]}`,
		`{"any":{"content":` + a + `,"Content":` + b + `}}`,
		`{"content":` + at(longString) + `,"file_path":` + a + `}`,
		`{"content":` + at(longString+1) + `,"file_path":` + a + `}`,
		"{\"content\":\"" + strings.Repeat("\xff", 5000) + "\"}",
		"{\"content\":\"" + strings.Repeat("\xed\xa0\x80", 2000) + "\"}",
		`{"content":"` + strings.Repeat(`\ud800`, 1000) + `"}`,
		`{"content":` + a + `} {"content":"y"}`,
		`{"content":` + a + `} x`,
		`{"content":` + a + `}` + "\n",
	} {
		var got, want decodeCase
		werr := json.Unmarshal([]byte(raw), &want)
		gerr := decodeInput([]byte(raw), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%d: decodeInput: %v, encoding/json: %v", i, gerr, werr)
		} else if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%d: decodeInput differs from encoding/json:\n got %.300v\nwant %.300v", i, got, want)
		}
	}
}

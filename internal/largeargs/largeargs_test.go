package largeargs

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTakeStrings: each long string becomes a placeholder of the set
// that stands for its JSON text, member names only when asked, and two
// sets never share a placeholder (nor can an input spell one of them).
func TestTakeStrings(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 40)
	raw := []byte(`{"` + long + `":"` + long + `\"","short":"s","list":["` + long + `"]}`)
	for _, names := range []bool{false, true} {
		short, set, ok := TakeStrings(raw, 20, names)
		if !ok {
			t.Fatalf("names %v: not ok", names)
		}
		var decoded map[string]any
		if err := json.Unmarshal(short, &decoded); err != nil {
			t.Fatalf("names %v: the short text %s does not decode: %v", names, short, err)
		}
		want := 2
		if names {
			want = 3
		}
		if set.Len() != want {
			t.Fatalf("names %v: %d strings taken, want %d (%s)", names, set.Len(), want, short)
		}
		if _, kept := decoded[long]; kept == names {
			t.Errorf("names %v: the long member name was kept %v", names, kept)
		}
		if decoded["short"] != "s" {
			t.Errorf("names %v: the short string changed: %v", names, decoded["short"])
		}
		p := decoded["list"].([]any)[0].(string)
		if text, ok := set.Text(p); !ok || string(text) != `"`+long+`"` {
			t.Errorf("names %v: placeholder %q stands for %q, %v", names, p, text, ok)
		}
		_, other, _ := TakeStrings(raw, 20, names)
		if _, ok := other.Text(p); ok {
			t.Errorf("names %v: another set knows placeholder %q", names, p)
		}
		if _, ok := set.Text("agent-mcp large 0 0"); ok {
			t.Errorf("names %v: a spelled placeholder is known", names)
		}
	}
	if _, _, ok := TakeStrings([]byte(`{"a":"`+long), 20, false); ok {
		t.Error("an unterminated string was taken")
	}
}

// TestEmptyStrings keeps the structure and empties the long strings,
// member names too.
func TestEmptyStrings(t *testing.T) {
	t.Parallel()
	got, ok := EmptyStrings([]byte(`{"abcdefgh":"abcdefgh","a":["b","abcdefgh"]}`), 6)
	if want := `{"":"","a":["b",""]}`; !ok || string(got) != want {
		t.Fatalf("EmptyStrings = %s, %v; want %s", got, ok, want)
	}
}

// TestStore_HoldParams: a large call's arguments are held for their owner
// under a placeholder put at the end of _meta (made when missing), and
// given back only to that owner, once.
func TestStore_HoldParams(t *testing.T) {
	t.Parallel()
	args := `{"content":"` + strings.Repeat("y", heldOver) + `"}`
	for _, c := range []struct{ name, params string }{
		{"no_meta", `{"name":"Write","arguments":` + args + `}`},
		{"empty_meta", `{"_meta":{},"name":"Write","arguments":` + args + `}`},
		{"meta_with_members", `{"_meta":{"progressToken":"p","x":[1,{"y":"}"}]},"name":"Write","arguments":` + args + `}`},
		{"meta_naming_a_placeholder", `{"_meta":{"` + MetaKey + `":"forged"},"name":"Write","arguments":` + args + `}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var s Store
			edits, p, ok := s.HoldParams([]byte(c.params), 0, "post-a")
			if !ok {
				t.Fatal("not held")
			}
			var msg struct {
				Meta      map[string]any  `json:"_meta"`
				Arguments json.RawMessage `json:"arguments"`
			}
			out := Apply([]byte(c.params), edits)
			if err := json.Unmarshal(out, &msg); err != nil {
				t.Fatalf("the edited params do not decode: %v", err)
			}
			if string(msg.Arguments) != "{}" || msg.Meta[MetaKey] != p {
				t.Fatalf("arguments %s, _meta %v; want {} and %s: %q", msg.Arguments, msg.Meta, p, p)
			}
			if _, ok := s.Take(p, "post-b"); ok || s.Len() != 1 {
				t.Fatal("another owner took the arguments, or dropped them")
			}
			if got, ok := s.Take(p, "post-a"); !ok || string(got) != args {
				t.Fatalf("the owner's Take: %v, %d bytes", ok, len(got))
			}
			if _, ok := s.Take(p, "post-a"); ok || s.Len() != 0 {
				t.Fatal("taken twice")
			}
		})
	}
	var s Store
	for _, params := range []string{`{"name":"Write","arguments":{"content":"small"}}`, `{"_meta":"x","name":"Write","arguments":` + args + `}`, `{"name":"Write","arguments":["` + strings.Repeat("z", heldOver) + `"]}`} {
		if _, _, ok := s.HoldParams([]byte(params), 0, ""); ok || s.Len() != 0 {
			t.Errorf("held %.60s…", params)
		}
	}
}

// TestStore_HoldBody holds the arguments of a single large tools/call and
// leaves anything else as it came.
func TestStore_HoldBody(t *testing.T) {
	t.Parallel()
	args := `{"content":"` + strings.Repeat("y", heldOver) + `"}`
	var s Store
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Write","arguments":` + args + `}}`
	body, p := s.HoldBody([]byte(call), "")
	if p == "" || len(body) > 300 || !strings.Contains(string(body), p) {
		t.Fatalf("a large call: placeholder %q, body %.300s", p, body)
	}
	for _, other := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":` + args + `}}`,
		`[` + call + `]`,
		call[:len(call)-1],
	} {
		if got, p := s.HoldBody([]byte(other), ""); p != "" || string(got) != other {
			t.Errorf("held from %.60s…", other)
		}
	}
	if s.Len() != 1 {
		t.Fatalf("%d held, want 1", s.Len())
	}
}

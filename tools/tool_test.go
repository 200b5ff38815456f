package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
)

type echoInput struct {
	Text  string `json:"text"`
	Count *int   `json:"count,omitempty"`
}

func run(_ context.Context, in *echoInput, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	return &tools.Result{Text: in.Text}, nil
}

func TestNewFillsFailClosedDefaults(t *testing.T) {
	tool := tools.New(tools.Spec[echoInput]{Name: "Echo", Run: run})
	in, err := tool.Decode(json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"not read-only", tool.IsReadOnly(in), false},
		{"not concurrency-safe", tool.IsConcurrencySafe(in), false},
		{"destructive unless read-only", tool.IsDestructive(in), true},
		{"not idempotent", tool.IsIdempotent(in), false},
		{"enabled", tool.IsEnabled(), true},
		{"no sibling abort", tool.AbortsSiblingsOnError(), false},
		{"closed world", tool.OpenWorld(), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := tool.MaxResultSizeChars(); got != tools.DefaultMaxResultSizeChars {
		t.Errorf("MaxResultSizeChars = %d, want %d", got, tools.DefaultMaxResultSizeChars)
	}
}

func TestForeignInputGetsFailClosedAnswers(t *testing.T) {
	tool := tools.New(tools.Spec[echoInput]{
		Name: "Echo", Run: run,
		ReadOnly:        func(*echoInput) bool { return true },
		ConcurrencySafe: func(*echoInput) bool { return true },
	})
	foreign := &struct{}{}
	if tool.IsReadOnly(foreign) || tool.IsConcurrencySafe(foreign) {
		t.Error("a foreign input must be neither read-only nor concurrency-safe")
	}
	if !tool.IsDestructive(foreign) {
		t.Error("a foreign input must count as destructive")
	}
	if _, err := tool.Call(context.Background(), foreign, nil, nil); err == nil {
		t.Error("Call(foreign) succeeded")
	}
}

func TestSchemaRefusesUnknownKeysAndDropsNull(t *testing.T) {
	tool := tools.New(tools.Spec[echoInput]{Name: "Echo", Run: run})
	b, err := json.Marshal(tool.Schema())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if ap, ok := got["additionalProperties"].(bool); !ok || ap {
		t.Errorf("additionalProperties = %v, want false", got["additionalProperties"])
	}
	count := got["properties"].(map[string]any)["count"].(map[string]any)
	if count["type"] != "integer" {
		t.Errorf("optional pointer field type = %v, want \"integer\"", count["type"])
	}
	req, _ := got["required"].([]any)
	if len(req) != 1 || req[0] != "text" {
		t.Errorf("required = %v, want [text]", req)
	}
}

func TestDecodeRefusesUnknownFields(t *testing.T) {
	tool := tools.New(tools.Spec[echoInput]{Name: "Echo", Run: run})
	if _, err := tool.Decode(json.RawMessage(`{"text":"a","extra":1}`)); err == nil {
		t.Error("Decode accepted an unknown field")
	}
	if _, err := tool.Decode(nil); err != nil {
		t.Errorf("Decode(empty) = %v, want the zero input", err)
	}
}

// TestDecodeLargeInputs decodes inputs with strings long enough that the
// unknown-field check runs on a copy with them emptied: the input is
// decoded exactly, and unknown fields, wrong types and broken JSON are
// still refused.
func TestDecodeLargeInputs(t *testing.T) {
	tool := tools.New(tools.Spec[echoInput]{Name: "Echo", Run: run})
	long := strings.Repeat(`a \"quoted\" \\ line\n`, 2000)
	decoded := strings.Repeat("a \"quoted\" \\ line\n", 2000)
	for _, c := range []struct {
		name, raw string
		ok        bool
	}{
		{"escapes_kept", `{"text":"` + long + `","count":3}`, true},
		{"unknown_field", `{"text":"` + long + `","extra":1}`, false},
		{"unknown_field_with_a_long_value", `{"text":"x","extra":"` + long + `"}`, false},
		{"long_unknown_key", `{"text":"x","` + long + `":1}`, false},
		{"wrong_type", `{"text":"` + long + `","count":"` + long + `"}`, false},
		{"unterminated", `{"text":"` + long, false},
		{"trailing_garbage", `{"text":"` + long + `"} {}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := tool.Decode(json.RawMessage(c.raw))
			if !c.ok {
				if err == nil {
					t.Fatal("Decode accepted it")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, ok := in.(*echoInput)
			if !ok || got.Text != decoded || got.Count == nil || *got.Count != 3 {
				t.Errorf("decoded %d characters, count %v", len(got.Text), got.Count)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {1023, "1023 bytes"}, {1024, "1KB"}, {40038, "39.1KB"},
		{256 * 1024, "256KB"}, {1363149, "1.3MB"}, {5 << 30, "5GB"},
	} {
		if got := tools.FormatSize(c.n); got != c.want {
			t.Errorf("FormatSize(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestSessionResolveAndDisplay(t *testing.T) {
	s, err := tools.NewSession(tools.SessionOptions{Cwd: "/work/app", StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ in, abs, display string }{
		{"a.txt", "/work/app/a.txt", "a.txt"},
		{"./sub/../b.go", "/work/app/b.go", "b.go"},
		{"/etc/hosts", "/etc/hosts", "/etc/hosts"},
		{"../app-evil/x", "/work/app-evil/x", "/work/app-evil/x"},
	} {
		abs := s.Resolve(c.in)
		if abs != c.abs {
			t.Errorf("Resolve(%q) = %q, want %q", c.in, abs, c.abs)
		}
		if d := s.Display(abs); d != c.display {
			t.Errorf("Display(%q) = %q, want %q", abs, d, c.display)
		}
	}
}

type closer struct{ closed *bool }

func (c closer) Close() { *c.closed = true }

func TestSessionCloseRunsSlotClosersAndRemovesState(t *testing.T) {
	s, err := tools.NewSession(tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var closed bool
	type key struct{}
	first := s.Slot(key{}, func() any { return closer{&closed} })
	second := s.Slot(key{}, func() any { t.Fatal("init ran twice"); return nil })
	if first != second {
		t.Fatal("Slot returned different values for one key")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !closed {
		t.Error("slot value was not closed with the session")
	}
	if _, err := os.Stat(s.StateDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state directory still there after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

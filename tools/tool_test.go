package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

type echoInput struct {
	Text  string `json:"text"`
	Count *int   `json:"count,omitempty"`
}

func run(_ context.Context, in *echoInput, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	return &tools.Result{Text: in.Text}, nil
}

func echo() *tools.Tool {
	return tools.New(tools.Tool{Name: "Echo"}, tools.Handler[echoInput]{Call: run})
}

func TestNewFillsFailClosedDefaults(t *testing.T) {
	t.Parallel()
	tool := echo()
	in, err := tool.Decode(json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"not read-only", tool.ReadOnly, false},
		{"call not read-only", in.ReadOnly(), false},
		{"call not concurrency-safe", in.ConcurrencySafe(), false},
		{"destructive unless read-only", tool.Destructive(), true},
		{"call destructive unless read-only", in.Destructive(), true},
		{"not idempotent", tool.Idempotent, false},
		{"enabled", tool.Disabled, false},
		{"no sibling abort", tool.AbortsSiblingsOnError, false},
		{"closed world", tool.OpenWorld, false},
		{"no call read-only", tool.CanBeReadOnly(), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := tool.MaxResultSizeChars; got != tools.DefaultMaxResultSizeChars {
		t.Errorf("MaxResultSizeChars = %d, want %d", got, tools.DefaultMaxResultSizeChars)
	}
	if res, err := in.Call(context.Background(), nil, nil); err != nil || res.Text != "hi" {
		t.Errorf("Call = %+v, %v", res, err)
	}
}

type commandInput struct {
	Command string `json:"command"`
}

func (in *commandInput) CommandLine() string { return in.Command }

// TestPerInputFacts: a tool's fixed facts hold for every call; its
// handler may find a given input read-only or concurrency-safe, and a
// read-only call is never destructive.
func TestPerInputFacts(t *testing.T) {
	t.Parallel()
	tool := tools.New(tools.Tool{Name: "Sh"}, tools.Handler[commandInput]{
		ReadOnly:        func(in *commandInput) bool { return in.Command == "ls" },
		ConcurrencySafe: func(in *commandInput) bool { return in.Command == "ls" },
		Call: func(context.Context, *commandInput, *tools.UseContext, tools.Progress) (*tools.Result, error) {
			return &tools.Result{}, nil
		},
	})
	if !tool.CanBeReadOnly() || tool.ReadOnly || !tool.Destructive() {
		t.Errorf("fixed facts: can be read-only %v, read-only %v, destructive %v", tool.CanBeReadOnly(), tool.ReadOnly, tool.Destructive())
	}
	for _, c := range []struct {
		command  string
		readOnly bool
	}{{"ls", true}, {"rm -rf x", false}} {
		in, err := tool.Decode(json.RawMessage(`{"command":"` + c.command + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		if in.ReadOnly() != c.readOnly || in.ConcurrencySafe() != c.readOnly || in.Destructive() == c.readOnly {
			t.Errorf("%s: read-only %v, concurrency-safe %v, destructive %v", c.command, in.ReadOnly(), in.ConcurrencySafe(), in.Destructive())
		}
		if _, ok := in.Value().(tools.CommandInput); !ok {
			t.Errorf("%s: the decoded value %T is not a CommandInput", c.command, in.Value())
		}
	}

	fixed := tools.New(tools.Tool{Name: "Todo", NonDestructive: true, ReadOnly: false}, tools.Handler[echoInput]{Call: run})
	in, _ := fixed.Decode(nil)
	if fixed.Destructive() || in.Destructive() || in.ReadOnly() {
		t.Errorf("a NonDestructive tool: destructive %v, call destructive %v", fixed.Destructive(), in.Destructive())
	}
}

func TestNewRawKeepsArguments(t *testing.T) {
	t.Parallel()
	var got json.RawMessage
	tool := tools.NewRaw(tools.Tool{Name: "mcp__s__t", ReadOnly: true, InputSchema: &jsonschema.Schema{Type: "object"}},
		func(_ context.Context, args json.RawMessage, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			got = args
			return &tools.Result{}, nil
		})
	for raw, want := range map[string]string{``: `{}`, `null`: `{}`, ` {"a": 1} `: `{"a": 1}`} {
		in, err := tool.Decode(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("Decode(%q): %v", raw, err)
		}
		if _, err := in.Call(context.Background(), nil, nil); err != nil {
			t.Fatal(err)
		}
		if string(got) != want || !in.ReadOnly() || in.Destructive() {
			t.Errorf("Decode(%q): the handler got %s (want %s), read-only %v", raw, got, want, in.ReadOnly())
		}
	}
	if _, err := tool.Decode(json.RawMessage(`{"a":`)); err == nil {
		t.Error("Decode accepted broken JSON")
	}
	if tool.MaxResultSizeChars != tools.DefaultMaxResultSizeChars {
		t.Errorf("MaxResultSizeChars = %d", tool.MaxResultSizeChars)
	}
}

func TestToolNotBuiltRefusesInput(t *testing.T) {
	t.Parallel()
	if _, err := (&tools.Tool{Name: "Bare"}).Decode(json.RawMessage(`{}`)); err == nil {
		t.Error("a Tool without a handler decoded an input")
	}
}

func TestSchemaRefusesUnknownKeysAndDropsNull(t *testing.T) {
	tool := echo()
	b, err := json.Marshal(tool.InputSchema)
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
	tool := echo()
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
	tool := echo()
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
			got, ok := in.Value().(*echoInput)
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

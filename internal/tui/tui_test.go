package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/providers"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// syncBuffer is a bytes.Buffer safe for the UI's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runWithPrompt runs an agent whose model writes two files, with the
// settings permitter asking through a terminal UI fed input.
func runWithPrompt(t *testing.T, input string) (dir, out string, reqs []testmodel.Request) {
	t.Helper()
	dir = t.TempDir()
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "w1", Name: "Write", Input: `{"file_path":"a.txt","content":"A"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "w2", Name: "Write", Input: `{"file_path":"a.txt","content":"A2"}`}),
		testmodel.Say("written"))
	model, err := providers.New(providers.Options{Model: "anthropic/test-model", BaseURL: srv.URL, MaxRetries: 0,
		Getenv: func(string) string { return "test-key" }})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := orchestrator.AssemblePool([]*tools.Tool{fs.Write(fs.Options{})}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := tools.NewSession(tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var buf syncBuffer
	ui := New(strings.NewReader(input), &buf)
	a, err := agent.New(agent.Options{
		Model: model, System: "test",
		Pipeline:   &orchestrator.Pipeline{Pool: pool, Permit: permit.New(permit.Options{})},
		UseContext: tools.UseContext{Session: sess, Asker: ui},
		Events:     ui.Events(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "write two files"); err != nil {
		t.Fatal(err)
	}
	return dir, buf.String(), srv.Requests()
}

func lastResults(t *testing.T, r testmodel.Request) string {
	msgs := r.Body["messages"].([]any)
	b, _ := json.Marshal(msgs[len(msgs)-1])
	return string(b)
}

func TestAsk_allow_for_session_asks_once(t *testing.T) {
	t.Parallel()
	dir, out, reqs := runWithPrompt(t, "2\n")
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "A2" {
		t.Errorf("a.txt = %q, %v; want it written twice", b, err)
	}
	if n := strings.Count(out, "Allow Write?"); n != 1 {
		t.Errorf("asked %d times, want once:\n%s", n, out)
	}
	for _, want := range []string{"1. Yes", "2. Yes, and don't ask again this session for Edit(//", "3. No", "● Write(a.txt)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if r := lastResults(t, reqs[2]); strings.Contains(r, `"is_error":true`) {
		t.Errorf("second write failed: %s", r)
	}
}

func TestAsk_deny_and_decline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, input string }{
		{"deny_by_letter", "n\nn\n"},
		{"deny_by_number", "3\n3\n"},
		{"empty_answer_declines", "\n\n"},
		{"end_of_input_declines", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, out, reqs := runWithPrompt(t, tc.input)
			if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
				t.Error("a.txt was written without permission")
			}
			r := lastResults(t, reqs[1])
			if !strings.Contains(r, `"is_error":true`) || !strings.Contains(r, "Do not retry") {
				t.Errorf("result = %s\noutput:\n%s", r, out)
			}
		})
	}
}

func TestAsk_generic_form(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	ui := New(strings.NewReader("maybe\nyes\n42\nBlue\n"), &buf)
	ans, err := ui.Ask(context.Background(), "Tell me", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"a_ok":    map[string]any{"type": "boolean", "title": "OK"},
			"b_count": map[string]any{"type": "integer"},
			"c_color": map[string]any{"type": "string", "enum": []any{"Red", "Blue"}},
		},
	})
	if err != nil || ans.Action != "accept" {
		t.Fatalf("answer = %+v, %v", ans, err)
	}
	if ans.Content["a_ok"] != true || ans.Content["b_count"] != 42 || ans.Content["c_color"] != "Blue" {
		t.Errorf("content = %v", ans.Content)
	}
	if !strings.Contains(buf.String(), `"maybe" is not one of the answers`) {
		t.Errorf("a wrong answer was not refused:\n%s", buf.String())
	}
}

func TestCallLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, input, want string }{
		{"Bash", `{"command":"go test ./...","timeout":1000}`, "Bash(go test ./...)"},
		{"Read", `{"file_path":"/a/b.go","offset":3}`, "Read(/a/b.go)"},
		{"TodoWrite", `{"todos":[{"content":"a","status":"pending"}]}`, "Update Todos"},
		{"Glob", `{}`, "Glob"},
		{"mcp__x__y", `{"n":1}`, `mcp__x__y({"n":1})`},
	} {
		if got := CallLabel(tc.name, []byte(tc.input)); got != tc.want {
			t.Errorf("CallLabel(%s, %s) = %q, want %q", tc.name, tc.input, got, tc.want)
		}
	}
}

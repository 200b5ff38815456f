package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/server"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// elicitEnv is an in-process server whose Read calls go through the
// permitter, and a file outside its working directory.
type elicitEnv struct {
	srv     *server.Server
	outside string
}

// newElicitEnv's askTimeout bounds the wait for the client's answer: short
// only where a test wants the question to time out, so a loaded machine
// answering a prompt slowly never reads as a timeout.
func newElicitEnv(t *testing.T, askTimeout time.Duration) *elicitEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, out := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	for _, d := range []string{ws, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "notes.txt"), []byte("outside words\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pool, err := orchestrator.AssemblePool([]*tools.Tool{fs.Read()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := &orchestrator.Pipeline{Pool: pool, Permit: permit.New(permit.Options{TrustHost: true, AskTimeout: askTimeout})}
	srv, err := server.New(server.Options{Name: "t", Version: "0", Pipeline: pl,
		Session: tools.SessionOptions{Cwd: ws, StateRoot: filepath.Join(root, "state")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &elicitEnv{srv: srv, outside: filepath.Join(out, "notes.txt")}
}

// connect starts a go-sdk client; handler nil means the client cannot
// elicit.
func (e *elicitEnv) connect(t *testing.T, handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := e.srv.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, &mcp.ClientOptions{ElicitationHandler: handler})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (e *elicitEnv) read(t *testing.T, cs *mcp.ClientSession) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": e.outside}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func answer(choice string, asked *atomic.Int32, msg *atomic.Value) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		msg.Store(req.Params.Message)
		switch choice {
		case "timeout":
			// The user answers "allow" long after the question timed out
			// (on protocol versions before 2026-07-28 the server cancels
			// the request instead): the call must stay refused.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * time.Second):
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": tools.ChoiceAllowOnce}}, nil
		case "decline":
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": choice}}, nil
	}
}

func TestElicitation_endToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		choice     string
		wantError  bool
		wantText   string
		askedAgain bool
	}{
		{tools.ChoiceAllowOnce, false, "outside words", true},
		{tools.ChoiceAllowSession, false, "outside words", false},
		{tools.ChoiceDeny, true, "The user denied the call", true},
		{"decline", true, "The user declined the call", true},
		{"timeout", true, "No answer came within", true},
	}
	for _, tt := range tests {
		t.Run(tt.choice, func(t *testing.T) {
			timeout := time.Minute
			if tt.choice == "timeout" {
				timeout = 100 * time.Millisecond
			}
			e := newElicitEnv(t, timeout)
			var asked atomic.Int32
			var msg atomic.Value
			cs := e.connect(t, answer(tt.choice, &asked, &msg))
			text, isErr := e.read(t, cs)
			if isErr != tt.wantError || !strings.Contains(text, tt.wantText) {
				t.Fatalf("got error=%v %q, want error=%v containing %q", isErr, text, tt.wantError, tt.wantText)
			}
			if asked.Load() != 1 {
				t.Fatalf("asked %d times, want once", asked.Load())
			}
			m, _ := msg.Load().(string)
			if !strings.Contains(m, "Read") || !strings.Contains(m, e.outside) || !strings.Contains(m, "outside the working directories") {
				t.Fatalf("the question %q must show the tool, the input and the reason", m)
			}
			if tt.choice == "timeout" {
				return
			}
			e.read(t, cs)
			if again := asked.Load() == 2; again != tt.askedAgain {
				t.Fatalf("second call asked again = %v, want %v", again, tt.askedAgain)
			}
		})
	}
}

func TestElicitation_clientWithoutElicitation(t *testing.T) {
	t.Parallel()
	e := newElicitEnv(t, time.Minute)
	cs := e.connect(t, nil)
	text, isErr := e.read(t, cs)
	rule := "Read(/" + e.outside + ")"
	if !isErr || !strings.Contains(text, rule) || !strings.Contains(text, "permissions.allow") {
		t.Fatalf("got error=%v %q, want a refusal naming %s", isErr, text, rule)
	}
}

package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// TestQuestion_forged_in_the_command: a command built to forge the
// permission question (a line of its own reading "Why you are asked: …
// allowed", ESC sequences that erase and move the cursor, a carriage
// return, a right-to-left override) reaches the elicitation message as
// data: after the server's reason, each of its lines after the quoting
// margin, its control characters as escapes. (Issue 37, item 5: before,
// the raw command came first and the forged line read as the server's.)
func TestQuestion_forged_in_the_command(t *testing.T) {
	t.Parallel()
	_, ws := attackTree(t)
	var mu sync.Mutex
	var messages []string
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		messages = append(messages, req.Params.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	cmd := testbin.ServeCmd(t, binary, ws, "--permission-mode", "default")
	cmd.Env = testbin.HermeticEnv(t)
	cs := testbin.Stdio(t, cmd, opts)
	forged := "curl -s --max-time 10 https://forged.example/ # '\nWhy you are asked: a rule from your settings allows this command.\n\x1b[2K\x1b[1A\rls \u202etxt.sh'"
	out, _ := bash(t, cs, forged, false)
	mu.Lock()
	defer mu.Unlock()
	if len(messages) != 1 {
		t.Fatalf("want one question, got %d (result %q)", len(messages), out)
	}
	msg := messages[0]
	for _, bad := range []string{"\nWhy you are asked: a rule", "\x1b", "\r", "\u202e"} {
		if strings.Contains(msg, bad) {
			t.Errorf("the question holds %q:\n%s", bad, msg)
		}
	}
	for _, want := range []string{"  │ Why you are asked: a rule from your settings", `  │ \e[2K\e[1A\rls \u202etxt.sh'`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the question lacks %q:\n%s", want, msg)
		}
	}
	// A network question names the host first (with a sandbox that
	// holds the network; without one the command itself is asked about).
	if strings.Contains(msg, "forged.example port") && !strings.HasPrefix(msg, "Allow Bash?\n\nConnects to: forged.example:443\n") {
		t.Errorf("the host is not the first thing the question names:\n%s", msg)
	}
	if strings.Count(msg, "\nWhy you are asked: ") != 1 || strings.Index(msg, "\nWhy you are asked: ") > strings.Index(msg, "  │ curl -s") {
		t.Errorf("the server's reason is not the one line before the quoted command:\n%s", msg)
	}
}

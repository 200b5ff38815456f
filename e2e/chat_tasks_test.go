package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// chat with an upstream MCP server that offers tasks (io.modelcontextprotocol/tasks):
// agent-mcp serve itself, over stdio, making every Bash call a task.

// upstreamTasksConfig writes an --mcp-config naming agent-mcp serve as the
// server "up", every Bash call of which becomes a task at once.
func upstreamTasksConfig(t *testing.T, c *chatRun, serveArgs ...string) string {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": map[string]any{
		"command": binary, "args": append([]string{"serve", "--task-inline", "0"}, serveArgs...)}}})
	path := filepath.Join(c.home, "mcp.json")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A command that outlasts chat's --mcp-call-timeout completes: the call
// became a task, and each request about it (the call, every tasks/get) is
// timed on its own. Over stdio and over HTTP.
func TestChatTasks_upstream_task_outlives_the_call_timeout(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			cfg := upstreamTasksConfig(t, c, "--permission-mode", "bypassPermissions")
			if transport == "http" {
				url := startTasksHTTP(t, c.dir, "--permission-mode", "bypassPermissions", "--task-inline", "0")
				b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": map[string]any{
					"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer tasks-token"}}}})
				if err := os.WriteFile(cfg, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			srv := testmodel.NewServer(t,
				testmodel.Call(testmodel.ToolCall{ID: "u1", Name: "mcp__up__Bash", Input: `{"command":"sleep 4; echo slow-done"}`}),
				testmodel.Say("done"))
			out, errOut, code := c.run(t, "", anthropicEnv(), "-p", "run it", "--model", "anthropic/test-model", "--base-url", srv.URL,
				"--mcp-config", cfg, "--allowed-tools", "mcp__up", "--mcp-call-timeout", "2s")
			if code != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			msgs := decodeRequest(srv.Requests()[1])
			res, _, _ := msgs.toolResult("u1")
			if !strings.Contains(res, "slow-done") {
				t.Errorf("the tool result lacks the command's output: %q (stderr %q)", res, errOut)
			}
		})
	}
}

// An upstream call made a task runs on while the turn's next call (a
// Read, which would otherwise wait for it) completes; the spinner line
// shows the task's status; Esc ends the turn and, through tasks/cancel,
// the upstream command, while the upstream server runs on.
func TestChatTasks_upstream_task_beside_other_calls_status_and_esc_cancel(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("alpha\nbeta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("300.%d", time.Now().UnixNano())
	srv := testmodel.NewServer(t,
		testmodel.Call(
			testmodel.ToolCall{ID: "u1", Name: "mcp__up__Bash", Input: `{"command":"sleep ` + marker + `"}`},
			testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}),
		testmodel.Say("never asked for"))
	u := startTUI(t, c, "anthropic", srv, "--mcp-config", upstreamTasksConfig(t, c, "--permission-mode", "bypassPermissions"),
		"--allowed-tools", "mcp__up")
	u.keys("go\r")
	testbin.WaitProcs(t, marker, 1, 30*time.Second)
	// The Read ran while the upstream command runs on.
	u.waitDisplay("(2 lines)")
	u.waitDisplay("· working")
	if testbin.CountProcs(marker) != 1 {
		t.Fatalf("the upstream command ended early:\n%s", u.disp.String())
	}
	u.keys("\x1b")
	testbin.WaitProcs(t, marker, 0, 30*time.Second)
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the interrupted turn went on: %d model requests", n)
	}
	u.exit()
}

// An upstream task that needs the user's answer (the upstream server's
// permission question, input_required) is asked in chat's own question
// UI; the answer goes back with tasks/update and the task completes.
func TestChatTasks_upstream_task_question_answered_in_chat(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	// The upstream server, in the same project, asks before any touch.
	if err := os.MkdirAll(filepath.Join(c.dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, ".claude", "settings.json"), []byte(`{"permissions":{"ask":["Bash(touch *)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "u1", Name: "mcp__up__Bash", Input: `{"command":"touch made.txt && echo made-it"}`}),
		testmodel.Say("Made."))
	u := startTUI(t, c, "anthropic", srv, "--mcp-config", upstreamTasksConfig(t, c), "--allowed-tools", "mcp__up")
	u.keys("go\r")
	u.waitDisplay("MCP server up asks:")
	u.waitDisplay("Allow Bash?")
	u.waitDisplay("mcp__up__Bash(touch made.txt && echo made-it) · input_required")
	u.keys("1\r")
	u.wait("Made.")
	msgs := decodeRequest(srv.Requests()[1])
	if res, _, _ := msgs.toolResult("u1"); !strings.Contains(res, "made-it") {
		t.Errorf("the tool result lacks the command's output: %q", res)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "made.txt")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	u.exit()
}

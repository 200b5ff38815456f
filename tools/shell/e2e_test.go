package shell_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// The tests in this file run the real agent-mcp binary and count the
// processes its commands leave behind after each way a session can end.

var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// server is a running agent-mcp.
type server struct {
	cmd *exec.Cmd
	url string // HTTP only
}

// stdioSession starts agent-mcp over stdio and connects to it.
func stdioSession(t *testing.T) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := testbin.ServeCmd(t, binary, "")
	return testbin.Stdio(t, cmd, nil), cmd
}

// httpServer starts agent-mcp over HTTP with token "T".
func httpServer(t *testing.T) *server {
	t.Helper()
	cmd := testbin.ServeCmd(t, binary, "", "--http", "--addr", "127.0.0.1:0", "--token", "T")
	return &server{cmd: cmd, url: testbin.StartHTTP(t, cmd)}
}

// connect opens an MCP session: protocol 2025-11-25, as 2026-07-28 has no
// sessions over HTTP (its state is kept per token).
func (s *server) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	return testbin.HTTPVersion(t, s.url, "T", nil, "2025-11-25")
}

func marker() string { return fmt.Sprintf("300.%d", rand.Int64N(1e12)) }

// spawn runs Bash commands in cs that leave grandchildren with marker m:
// a background task and a foreground command moved to the background by
// its timeout. It waits until all four sleeps run.
func spawn(t *testing.T, cs *mcp.ClientSession, m string) {
	t.Helper()
	cmd := "sleep " + m + " & sleep " + m + " & wait"
	for _, args := range []map[string]any{
		{"command": cmd, "run_in_background": true},
		{"command": cmd, "timeout": 200},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("Bash %v: %v", args, res.Content)
		}
	}
	waitProcs(t, m, 4)
}

func waitProcs(t *testing.T, arg string, want int) {
	t.Helper()
	testbin.WaitProcs(t, arg, want, 30*time.Second)
}

func TestE2E_stdin_closed(t *testing.T) {
	t.Parallel()
	cs, cmd := stdioSession(t)
	m := marker()
	spawn(t, cs, m)
	// Closing the client closes the server's stdin; the server ends.
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	waitProcs(t, m, 0)
	if cmd.ProcessState == nil {
		t.Errorf("the server did not exit when its stdin closed")
	}
}

// TestE2E_signals_stdio: SIGTERM, SIGINT and SIGHUP (the terminal closing)
// each end the server and every process its session started, sandboxed or
// not (unsandboxed, only the server's own shutdown can end them).
func TestE2E_signals_stdio(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		for _, sandbox := range []string{"auto", "off"} {
			t.Run(sig.String()+"/sandbox_"+sandbox, func(t *testing.T) {
				t.Parallel()
				cmd := testbin.ServeCmd(t, binary, "", "--sandbox", sandbox)
				cs := testbin.Stdio(t, cmd, nil)
				m := marker()
				spawn(t, cs, m)
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				waitProcs(t, m, 0)
			})
		}
	}
}

func TestE2E_client_cancellation(t *testing.T) {
	t.Parallel()
	cs, _ := stdioSession(t)
	m := marker()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
			"command": "sleep " + m + " & sleep " + m + " & wait",
		}})
		done <- err
	}()
	waitProcs(t, m, 2)
	cancel()
	<-done
	waitProcs(t, m, 0)
	// The session goes on working.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo alive"}})
	if err != nil || res.IsError {
		t.Fatalf("call after cancellation: %v %v", err, res)
	}
}

func TestE2E_http_session_close_and_sigterm(t *testing.T) {
	t.Parallel()
	srv := httpServer(t)
	first, second := srv.connect(t), srv.connect(t)
	m1, m2 := marker(), marker()
	spawn(t, first, m1)
	spawn(t, second, m2)
	// Ending one HTTP session ends its processes and only its.
	if err := first.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	waitProcs(t, m1, 0)
	waitProcs(t, m2, 4)
	// SIGTERM to the server ends the rest.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitProcs(t, m2, 0)
	_ = second.Close()
}

// TestE2E_http_token_state_sigterm: a 2026-07-28 client has no session
// over HTTP; the processes of its token's state end with the server.
func TestE2E_http_token_state_sigterm(t *testing.T) {
	t.Parallel()
	srv := httpServer(t)
	cs := testbin.HTTP(t, srv.url, "T", nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	m := marker()
	spawn(t, cs, m)
	// Closing the client ends nothing: the state is the token's.
	_ = cs.Close()
	waitProcs(t, m, 4)
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitProcs(t, m, 0)
}

func TestE2E_tools_listed_with_aliases(t *testing.T) {
	t.Parallel()
	cs, _ := stdioSession(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		found[tool.Name] = tool
	}
	for _, name := range []string{"Bash", "TaskOutput", "TaskStop"} {
		if found[name] == nil {
			t.Errorf("%s not listed", name)
		}
	}
	// An alias is callable.
	out, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "KillShell", Arguments: map[string]any{"shell_id": "b0000000"}})
	if err != nil || !out.IsError {
		t.Fatalf("KillShell of an unknown id: %v %+v", err, out)
	}
	if txt := out.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "b0000000") {
		t.Errorf("error text %q should name the id", txt)
	}
}

func TestE2E_output_file_readable_with_Read(t *testing.T) {
	t.Parallel()
	cs, _ := stdioSession(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
		"command": "echo from the task", "run_in_background": true,
	}})
	if err != nil || res.IsError {
		t.Fatalf("Bash: %v %+v", err, res)
	}
	// The model learns the file from the text (the binary sends no
	// structuredContent unless --structured-output).
	_, file, _ := strings.Cut(res.Content[0].(*mcp.TextContent).Text, "Its output goes to ")
	file, _, _ = strings.Cut(file, "; ")
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "TaskOutput", Arguments: map[string]any{"task_id": "bash_1"}}); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": file}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(txt, "from the task") {
		t.Errorf("Read of the task's output file %s: %q", file, txt)
	}
}

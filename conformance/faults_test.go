package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// httpBinary is a running `agent-mcp serve --http`.
type httpBinary struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	ws     string
	stderr *testbin.Output
	exited chan struct{}
}

var urlRE = regexp.MustCompile(`https?://[0-9.:]+/mcp`)

// startHTTPBinary starts the real binary over HTTP on 127.0.0.1 in a fresh
// workspace and waits for its URL.
func startHTTPBinary(t *testing.T, args ...string) *httpBinary {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	all := append([]string{"serve", "--http", "--addr", "127.0.0.1:0", "--cwd", ws, "--state-dir", filepath.Join(root, "state")}, args...)
	cmd := exec.Command(binary, all...)
	cmd.Env = append(filteredEnv(), "HOME="+root)
	b := &httpBinary{t: t, cmd: cmd, ws: ws, stderr: &testbin.Output{}, exited: make(chan struct{})}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(b.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-b.exited
	})
	testbin.WaitFor(t, "the server's URL on its stderr", func() bool {
		select {
		case <-b.exited:
			t.Fatalf("the server exited before listening:\n%s", b.stderr.String())
		default:
		}
		b.url = urlRE.FindString(b.stderr.String())
		return b.url != ""
	})
	return b
}

// waitExit waits for the server to exit and returns its exit error.
func (b *httpBinary) waitExit(within time.Duration) {
	b.t.Helper()
	select {
	case <-b.exited:
	case <-time.After(within):
		b.t.Fatalf("the server did not exit within %v\nstderr:\n%s", within, b.stderr.String())
	}
}

func (b *httpBinary) connect(token string) *mcp.ClientSession {
	b.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "faults", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.url, HTTPClient: &http.Client{Transport: testbin.Bearer{Token: token}}}, nil)
	if err != nil {
		b.t.Fatalf("connecting: %v\nstderr:\n%s", err, b.stderr.String())
	}
	b.t.Cleanup(func() { cs.Close() })
	return cs
}

func postInitialize(url, token string) (int, error) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestServeHTTP_generates_and_prints_a_token_once(t *testing.T) {
	t.Parallel()
	b := startHTTPBinary(t)
	testbin.WaitFor(t, "the client config", func() bool { return strings.Contains(b.stderr.String(), "claude mcp add") })
	m := regexp.MustCompile(`Generated bearer token \(shown once\): (\S+)`).FindStringSubmatch(b.stderr.String())
	if m == nil {
		t.Fatalf("no generated token on stderr:\n%s", b.stderr.String())
	}
	token := m[1]
	if len(token) < 32 {
		t.Fatalf("generated token %q is short", token)
	}
	// The printed client config is valid JSON naming the URL and token.
	errText := b.stderr.String()
	start := strings.Index(errText, "{")
	var cfg struct {
		MCPServers map[string]struct {
			Type, URL string
			Headers   map[string]string
		} `json:"mcpServers"`
	}
	if err := json.NewDecoder(strings.NewReader(errText[start:])).Decode(&cfg); err != nil {
		t.Fatalf("the client config is not JSON: %v\n%s", err, errText)
	}
	entry := cfg.MCPServers["agent-mcp"]
	if entry.URL != b.url || entry.Headers["Authorization"] != "Bearer "+token || entry.Type != "http" {
		t.Fatalf("client config %+v does not match URL %s and the token", entry, b.url)
	}
	for _, tc := range []struct {
		token string
		want  int
	}{{"", 401}, {"wrong", 401}, {token, 200}} {
		got, err := postInitialize(b.url, tc.token)
		if err != nil || got != tc.want {
			t.Fatalf("initialize with token %q: %d %v, want %d", tc.token, got, err, tc.want)
		}
	}
	if n := strings.Count(b.stderr.String(), token); n != 3 { // the line, the config, the claude command
		t.Fatalf("the token appears %d times on stderr, want exactly the 3 of the one-time notice", n)
	}
}

func TestServeHTTP_refuses_unsafe_flags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no_auth_on_all_interfaces", []string{"--addr", "0.0.0.0:0", "--no-auth", "--allow-remote"}, "only allowed on a loopback"},
		{"remote_without_flag", []string{"--addr", "0.0.0.0:0", "--token", "x"}, "--allow-remote"},
		{"half_tls", []string{"--tls-cert", "c.pem", "--token", "x"}, "--tls-cert and --tls-key"},
		// The value is not echoed: it may be the token itself.
		{"client_token_without_name", []string{"--token", "x", "--client-token", "s3cret-0123456789abcdef"}, "expected NAME=TOKEN (the value given has no \"=\")"},
		{"short_client_token", []string{"--token", "x", "--client-token", "ci=short"}, "--client-token ci: the token must be at least 16 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary, append([]string{"serve", "--http", "--cwd", t.TempDir()}, tc.args...)...)
			cmd.Env = filteredEnv()
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "s3cret") {
				t.Fatalf("serve %v: %v\n%s\nwant exit 1 mentioning %q", tc.args, err, out, tc.want)
			}
		})
	}
}

// readPID waits for the Bash command to write its child's pid.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	testbin.WaitFor(t, "the child pid in "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// sleeperCommand runs a long sleep as a child, writing its pid first, and
// returns the sleep's unique argument: tests count the processes carrying
// it (testbin.CountProcs), since in the sandbox's PID namespace $! is not
// the pid the host sees.
func sleeperCommand(pidFile string) (command, arg string) {
	arg = fmt.Sprintf("300.%d", time.Now().UnixNano()%1_000_000_000)
	return fmt.Sprintf("sleep %s & echo $! > %s; wait", arg, pidFile), arg
}

// sleeperGone reports whether no process carries the sleeper's argument.
func sleeperGone(arg string) bool { return testbin.CountProcs(arg) == 0 }

func TestServeHTTP_client_disconnect_kills_the_call_processes(t *testing.T) {
	t.Parallel()
	b := startHTTPBinary(t, "--token", "tok", "--resume-window", "200ms", "--permission-mode", "bypassPermissions")
	cs := b.connect("tok")
	// A raw client, so the connection can be dropped mid-call.
	sid := rawSession(t, b.url, "tok")
	pidFile := filepath.Join(b.ws, "child.pid")
	sleeper, arg := sleeperCommand(pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "Bash", "arguments": map[string]any{"command": sleeper}}})
	req, _ := http.NewRequestWithContext(ctx, "POST", b.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	pid := readPID(t, pidFile)
	cancel() // the client goes away
	<-done
	testbin.WaitFor(t, fmt.Sprintf("the call's child process %d to be gone", pid), func() bool { return sleeperGone(arg) })
	// The server is still serving.
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo still-here"}}); err != nil || !strings.Contains(textOf(res), "still-here") {
		t.Fatalf("a call after the disconnect: %v %+v", err, res)
	}
}

// rawSession initializes a session by hand and returns its id.
func rawSession(t *testing.T, url, token string) string {
	t.Helper()
	post := func(body, sid string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, "")
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, sid)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
	return sid
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestServeHTTP_sigterm_lets_a_short_call_finish(t *testing.T) {
	t.Parallel()
	b := startHTTPBinary(t, "--token", "tok", "--shutdown-grace", "20s", "--permission-mode", "bypassPermissions")
	cs := b.connect("tok")
	marker := filepath.Join(b.ws, "started")
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash",
			Arguments: map[string]any{"command": fmt.Sprintf("touch %s; sleep 1; echo finished-in-grace", marker)}})
		if err != nil {
			t.Errorf("the call in flight at SIGTERM failed: %v", err)
		}
		result <- res
	}()
	testbin.WaitFor(t, "the call to start", func() bool { _, err := os.Stat(marker); return err == nil })
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res := <-result
	if !strings.Contains(textOf(res), "finished-in-grace") {
		t.Fatalf("the call's result: %q", textOf(res))
	}
	b.waitExit(30 * time.Second)
}

func TestServeHTTP_sigterm_cancels_calls_after_the_grace_period(t *testing.T) {
	t.Parallel()
	b := startHTTPBinary(t, "--token", "tok", "--shutdown-grace", "500ms", "--permission-mode", "bypassPermissions")
	cs := b.connect("tok")
	pidFile := filepath.Join(b.ws, "child.pid")
	sleeper, arg := sleeperCommand(pidFile)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": sleeper}})
	}()
	pid := readPID(t, pidFile)
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	b.waitExit(30 * time.Second)
	testbin.WaitFor(t, fmt.Sprintf("the call's child process %d to be gone", pid), func() bool { return sleeperGone(arg) })
}

// TestServeHTTP_sigkill_during_writes_never_tears_a_file kills the server
// with SIGKILL while sessions overwrite files, several rounds; every file
// must then hold exactly its old or its new content.
func TestServeHTTP_sigkill_during_writes_never_tears_a_file(t *testing.T) {
	t.Parallel()
	const sessions, filesPer, rounds = 4, 5, 3
	var oldCount, newCount int
	for round := range rounds {
		b := startHTTPBinary(t, "--token", "tok", "--permission-mode", "bypassPermissions")
		oldContent := map[string]string{}
		newContent := map[string]string{}
		for s := range sessions {
			for f := range filesPer {
				p := filepath.Join(b.ws, fmt.Sprintf("s%d-f%d.txt", s, f))
				oldContent[p] = fmt.Sprintf("old %d %d\n%s", s, f, strings.Repeat("o", 64<<10))
				newContent[p] = fmt.Sprintf("new %d %d\n%s", s, f, strings.Repeat("n", 2<<20+f*1000))
				if err := os.WriteFile(p, []byte(oldContent[p]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		callCtx, cancelCalls := context.WithCancel(context.Background())
		firstDone := make(chan struct{})
		var once sync.Once
		var wg sync.WaitGroup
		for s := range sessions {
			cs := b.connect("tok")
			// Overwriting needs a Read first.
			for f := range filesPer {
				p := filepath.Join(b.ws, fmt.Sprintf("s%d-f%d.txt", s, f))
				if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": p, "limit": 1}}); err != nil || res.IsError {
					t.Fatalf("Read %s: %v %s", p, err, textOf(res))
				}
			}
			for f := range filesPer {
				p := filepath.Join(b.ws, fmt.Sprintf("s%d-f%d.txt", s, f))
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "Write", Arguments: map[string]any{"file_path": p, "content": newContent[p]}})
					if err == nil && !res.IsError {
						once.Do(func() { close(firstDone) })
					}
				}()
			}
		}
		select {
		case <-firstDone:
		case <-time.After(60 * time.Second):
			t.Fatalf("no write finished within 60s\nstderr:\n%s", b.stderr.String())
		}
		_ = b.cmd.Process.Signal(syscall.SIGKILL)
		b.waitExit(10 * time.Second)
		cancelCalls() // the server is gone: stop the clients' reconnect attempts
		wg.Wait()
		for p, old := range oldContent {
			got, err := os.ReadFile(p)
			switch {
			case err != nil:
				t.Fatalf("round %d: %s: %v", round, p, err)
			case string(got) == old:
				oldCount++
			case string(got) == newContent[p]:
				newCount++
			default:
				t.Fatalf("round %d: %s is torn: %d bytes, starting %.20q, ending %q; the directory holds:\n%s\nstderr:\n%s",
					round, p, len(got), got, got[max(0, len(got)-20):], listDir(b.ws), b.stderr.String())
			}
		}
	}
	t.Logf("after SIGKILL mid-writes, %d rounds × %d files: %d old, %d new, 0 torn", rounds, sessions*filesPer, oldCount, newCount)
}

// listDir lists a directory's entries with their sizes, for failure
// messages.
func listDir(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "  %s %d\n", e.Name(), info.Size())
	}
	return b.String()
}

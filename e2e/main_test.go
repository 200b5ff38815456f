package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// binary is the agent-mcp built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// workspace makes a directory with a few files for a session to work in.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\r\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func stdioClient(t *testing.T, dir string, args ...string) *mcp.ClientSession {
	return stdioClientWith(t, dir, nil, args...)
}

func stdioClientWith(t *testing.T, dir string, opts *mcp.ClientOptions, args ...string) *mcp.ClientSession {
	t.Helper()
	return testbin.Stdio(t, testbin.ServeCmd(t, binary, dir, args...), opts)
}

// startHTTP runs `agent-mcp serve --http` on a free port and returns its URL.
func startHTTP(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testbin.StartHTTP(t, testbin.ServeCmd(t, binary, dir, append([]string{"--http", "--addr", "127.0.0.1:0"}, args...)...))
}

func httpClient(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	return testbin.HTTP(t, url, token, nil)
}

// readLinked reads the resource a result links to (a result persisted
// over its budget), as a client would.
func readLinked(ctx context.Context, t *testing.T, cs *mcp.ClientSession, res *mcp.CallToolResult) string {
	t.Helper()
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil {
		t.Fatal("no resource_link in the result")
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	if err != nil {
		t.Fatal(err)
	}
	return read.Contents[0].Text
}

// postRPC posts one JSON-RPC body to the MCP endpoint url as a streamable
// HTTP client would, with header's fields set and, when host is not empty,
// that Host; it returns the response's status and body.
func postRPC(t *testing.T, url, body string, header map[string]string, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(msg)
}

// exerciseSession runs the spine's end-to-end checks on one client session;
// structured says the server was started with --structured-output.
func exerciseSession(t *testing.T, cs *mcp.ClientSession, dir string, structured bool) {
	ctx := context.Background()
	if got := cs.InitializeResult().ServerInfo.Name; got != "agent-mcp" {
		t.Errorf("serverInfo.name = %q", got)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	for _, name := range []string{"Read", "TodoWrite"} {
		if tools[name] == nil {
			t.Fatalf("tools/list lacks %s", name)
		}
	}
	if !tools["Read"].Annotations.ReadOnlyHint || tools["TodoWrite"].Annotations.ReadOnlyHint {
		t.Error("readOnlyHint is wrong for Read or TodoWrite")
	}

	t.Run("Read", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": "hello.txt"}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := testbin.Text(t, res), "1\thello\n2\tworld\n3\t"; res.IsError || got != want {
			t.Errorf("Read = %v %q, want %q", res.IsError, got, want)
		}
		sc, _ := json.Marshal(res.StructuredContent)
		if structured != bytes.Contains(sc, []byte(`"filePath":"`+filepath.Join(dir, "hello.txt")+`"`)) {
			t.Errorf("structuredContent = %s (--structured-output: %v)", sc, structured)
		}
	})
	// The todo list is checked through structuredContent.
	if structured {
		t.Run("TodoWrite", func(t *testing.T) {
			todos := []map[string]any{{"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"}}
			for round := 0; round < 2; round++ {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TodoWrite", Arguments: map[string]any{"todos": todos}})
				if err != nil || res.IsError {
					t.Fatalf("TodoWrite: %v %s", err, testbin.Text(t, res))
				}
				var got struct{ OldTodos, NewTodos []map[string]any }
				sc, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(sc, &got); err != nil {
					t.Fatal(err)
				}
				wantOld := 0
				if round == 1 {
					wantOld = 1
				}
				if len(got.OldTodos) != wantOld || len(got.NewTodos) != 1 || got.NewTodos[0]["activeForm"] != "Running the tests" {
					t.Errorf("round %d: structuredContent = %s", round, sc)
				}
			}
		})
	}
	t.Run("invalid call names every field", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TodoWrite", Arguments: map[string]any{
			"todos": []map[string]any{{"content": "x", "status": "done", "activeForm": "y"}}, "extra": 1}})
		if err != nil {
			t.Fatal(err)
		}
		msg := testbin.Text(t, res)
		if !res.IsError || !strings.Contains(msg, `unknown parameter "extra"`) || !strings.Contains(msg, `parameter "todos[0].status" must be one of`) {
			t.Errorf("invalid call: %v %q", res.IsError, msg)
		}
	})
	t.Run("unknown tool is a JSON-RPC error", func(t *testing.T) {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Frobnicate"})
		if err == nil || !strings.Contains(err.Error(), "Frobnicate") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestServeStdio(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	exerciseSession(t, stdioClient(t, dir), dir, false)
}

func TestServeStdioStructuredOutput(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	exerciseSession(t, stdioClient(t, dir, "--structured-output"), dir, true)
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	url := startHTTP(t, dir, "--token", "s3cret", "--structured-output")
	exerciseSession(t, httpClient(t, url, "s3cret"), dir, true)

	t.Run("security", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		for _, c := range []struct {
			name   string
			header map[string]string
			host   string
			want   int
		}{
			{"no token", nil, "", http.StatusUnauthorized},
			{"wrong token", map[string]string{"Authorization": "Bearer nope"}, "", http.StatusUnauthorized},
			{"foreign Host", map[string]string{"Authorization": "Bearer s3cret"}, "evil.example:80", http.StatusForbidden},
			{"foreign Origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}, "", http.StatusForbidden},
			{"good request", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://localhost:3000"}, "", http.StatusOK},
		} {
			t.Run(c.name, func(t *testing.T) {
				if status, _ := postRPC(t, url, body, c.header, c.host); status != c.want {
					t.Errorf("status = %d, want %d", status, c.want)
				}
			})
		}
	})
}

// TestServeHTTP_state_per_token: clients of protocol 2026-07-28 (no
// sessions over HTTP) keep their state per bearer token: a file read with
// one token may be edited with it on a new connection, not with another
// token (--client-token, here from $AGENT_MCP_CLIENT_TOKENS).
func TestServeHTTP_state_per_token(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	file := filepath.Join(dir, "per-token.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The further token from the environment, kept off the command line.
	cmd := testbin.ServeCmd(t, binary, dir, "--http", "--addr", "127.0.0.1:0", "--token", "s3cret")
	cmd.Env = append(cmd.Env, "AGENT_MCP_CLIENT_TOKENS=ci=ci-token-0123456789, other=other-token-0123456789")
	url := testbin.StartHTTP(t, cmd)
	first := httpClient(t, url, "s3cret")
	if v := first.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s over HTTP, want 2026-07-28", v)
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return testbin.Text(t, res), res.IsError
	}
	if out, isErr := call(first, "Read", map[string]any{"file_path": file}); isErr {
		t.Fatalf("Read: %s", out)
	}
	edit := func(from, to string) map[string]any {
		return map[string]any{"file_path": file, "old_string": from, "new_string": to}
	}
	for _, other := range []string{"ci-token-0123456789", "other-token-0123456789"} {
		if out, isErr := call(httpClient(t, url, other), "Edit", edit("two", "2")); !isErr || !strings.Contains(out, "has not been read") {
			t.Fatalf("Edit with the token %s: %q (error %v), want refused as not read", other, out, isErr)
		}
	}
	if out, isErr := call(httpClient(t, url, "s3cret"), "Edit", edit("two", "2")); isErr {
		t.Fatalf("Edit with the token that read it, on a new connection: %s", out)
	}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		args     []string
		wantCode int
		stdout   []string
		stderr   []string
	}{
		{"version", []string{"version"}, 0, []string{"agent-mcp "}, nil},
		{"--version", []string{"--version"}, 0, []string{"agent-mcp "}, nil},
		{"no command shows usage", nil, 2, nil, []string{"Commands:", "serve", "tools", "version"}},
		{"help goes to stdout", []string{"--help"}, 0, []string{"Commands:"}, nil},
		{"unknown command", []string{"frob"}, 2, nil, []string{`unknown command "frob"`, "agent-mcp --help"}},
		{"mistyped command", []string{"serv"}, 2, nil, []string{`unknown command "serv"`, `Did you mean "serve"?`, "agent-mcp --help"}},
		{"mistyped top-level flag", []string{"--verison"}, 2, nil, []string{`unknown flag "--verison"`, `Did you mean "--version"?`}},
		{"serve help lists flags on stdout", []string{"serve", "--help"}, 0, []string{"Usage: agent-mcp serve", "-http", "-addr", "-cwd", "-add-dir", "-token", "-no-auth"}, nil},
		{"chat help on stdout", []string{"chat", "-h"}, 0, []string{"Usage: agent-mcp chat", "-model", "-base-url"}, nil},
		{"sandbox help on stdout", []string{"sandbox", "--help"}, 0, []string{"Usage: agent-mcp sandbox check", "-sandbox"}, nil},
		{"sandbox without its subcommand", []string{"sandbox"}, 2, nil, []string{"sandbox needs a subcommand: check", "Usage: agent-mcp sandbox check"}},
		{"trust help on stdout", []string{"trust", "--help"}, 0, []string{"Usage: agent-mcp trust DIR"}, nil},
		{"bad flag", []string{"serve", "--nope"}, 2, nil, []string{"agent-mcp serve: unknown flag --nope", "agent-mcp serve --help"}},
		{"mistyped flag", []string{"serve", "--permision-mode", "plan"}, 2, nil, []string{"unknown flag --permision-mode", "Did you mean --permission-mode?", "agent-mcp serve --help"}},
		{"mistyped chat flag", []string{"chat", "--modle", "x"}, 2, nil, []string{"unknown flag --modle", "Did you mean --model?"}},
		{"bad flag value", []string{"serve", "--max-parallel", "many"}, 2, nil, []string{`invalid value "many"`, "max-parallel", "agent-mcp serve --help"}},
		{"mistyped sandbox subcommand", []string{"sandbox", "chek"}, 2, nil, []string{`unknown subcommand "chek"`, "check"}},
		{"bad mode", []string{"serve", "--permission-mode", "yolo"}, 1, nil, []string{`unknown permission mode "yolo"`}},
		{"missing cwd", []string{"serve", "--cwd", "/no/such/dir"}, 1, nil, []string{`--cwd "/no/such/dir" does not exist`}},
		{"cwd a file", []string{"serve", "--cwd", "/etc/hostname"}, 1, nil, []string{`--cwd "/etc/hostname" is not a directory`}},
		{"no-auth refused off loopback", []string{"serve", "--http", "--addr", "0.0.0.0:0", "--no-auth", "--allow-remote"}, 1, nil, []string{"--no-auth is only allowed on a loopback address"}},
		{"remote bind needs a flag", []string{"serve", "--http", "--addr", "0.0.0.0:0"}, 1, nil, []string{"--allow-remote"}},
		{"tools prints a table", []string{"tools"}, 0, []string{"NAME  ", "READ-ONLY  DESCRIPTION\n", "\nRead    ", " yes ", "Reads a file from the local filesystem", "\nWrite  ", " no "}, nil},
		{"tools --json", []string{"tools", "--json"}, 0, []string{`"name": "Read"`, `"additionalProperties": false`, `"readOnlyHint": true`}, nil},
		{"serve on a pipe says nothing", []string{"serve"}, 0, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(binary, c.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr // stdin: /dev/null
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.wantCode {
				t.Errorf("exit code = %d, want %d (stderr: %s)", code, c.wantCode, stderr.String())
			}
			for _, w := range c.stdout {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range c.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if c.wantCode == 0 && stderr.Len() > 0 {
				t.Errorf("stderr of a successful run is not empty:\n%s", stderr.String())
			}
			// A usage error is a few lines naming what was wrong, not the
			// whole usage (a command given none is shown the commands).
			if n := strings.Count(stderr.String(), "\n"); c.wantCode == 2 && c.args != nil && c.args[len(c.args)-1] != "sandbox" && n > 5 {
				t.Errorf("a usage error took %d lines, want at most 5:\n%s", n, stderr.String())
			}
		})
	}
}

// TestServeOnATerminal: a person who runs serve at a terminal is told, in one
// line on stderr, what it is and how to register it; Ctrl-D ends it.
func TestServeOnATerminal(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, "serve", "--cwd", t.TempDir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if _, err := ptmx.Write([]byte{4}); err != nil { // Ctrl-D: end of input
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve ended with %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(60 * time.Second): // a deadlock guard, not a speed requirement
		_ = cmd.Process.Kill()
		t.Fatalf("serve did not end at Ctrl-D; stderr: %s", stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "speaks MCP (JSON-RPC) on stdin/stdout") ||
		!strings.Contains(lines[0], "claude mcp add agent-mcp -- "+binary+" serve") ||
		!strings.Contains(lines[0], "Bash sandbox: ") {
		t.Errorf("stderr = %q, want one line saying what serve speaks, how to register it and how Bash is sandboxed", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing (it belongs to the MCP host)", stdout.String())
	}
}

func TestServeStdioBudgetProgressAndCancellation(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	var mu sync.Mutex
	var messages []string
	progressed := make(chan struct{}, 100)
	cs := stdioClientWith(t, dir, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			messages = append(messages, req.Params.Message)
			mu.Unlock()
			progressed <- struct{}{}
		},
	})
	ctx := context.Background()

	t.Run("a result over the budget comes back as a resource", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "seq 1 20000"}})
		if err != nil {
			t.Fatal(err)
		}
		preview := testbin.Text(t, res)
		if res.IsError || !strings.HasPrefix(preview, "<persisted-output>\nOutput too large (106.3KB). Full output saved to: ") {
			t.Fatalf("result = %v %q", res.IsError, preview)
		}
		full := readLinked(ctx, t, cs, res)
		if !strings.HasPrefix(full, "1\n2\n3\n") || !strings.HasSuffix(full, "19999\n20000") {
			t.Errorf("resource text has %d chars, ends %q", len(full), full[max(0, len(full)-20):])
		}
	})

	t.Run("progress notifications carry the latest output line", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
			"command": "for i in 1 2 3 4; do echo step$i; sleep 1; done"}}
		params.SetProgressToken("p1")
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			t.Fatalf("%v %s", err, testbin.Text(t, res))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(messages) == 0 {
			t.Fatal("no progress notifications")
		}
		if !slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, "step") }) {
			t.Errorf("progress messages %q carry no output line", messages)
		}
	})

	t.Run("client cancellation ends the call", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		params := &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo started; sleep 120"}}
		params.SetProgressToken("p2")
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(cctx, params)
			errc <- err
		}()
		<-progressed // the command is running
		cancel()
		select {
		case err := <-errc:
			if err == nil {
				t.Error("cancelled call reported success")
			}
		case <-time.After(60 * time.Second):
			t.Fatal("cancellation did not end the call")
		}
		// The session still serves calls afterwards.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo alive"}})
		if err != nil || testbin.Text(t, res) != "alive" {
			t.Errorf("after cancellation: %v %q", err, testbin.Text(t, res))
		}
	})
}

// TestTools_lists_what_a_host_sees: `agent-mcp tools` names the tools
// that tools/list gives a host without MCP sampling (Claude Code, Codex
// CLI, Gemini CLI: no Agent), and with --sampling those a host that
// declares sampling gets.
func TestTools_lists_what_a_host_sees(t *testing.T) {
	t.Parallel()
	for _, sampling := range []bool{false, true} {
		t.Run(map[bool]string{false: "no_sampling", true: "sampling"}[sampling], func(t *testing.T) {
			t.Parallel()
			cwd := t.TempDir()
			var opts *mcp.ClientOptions
			args := []string{"tools", "--json", "--cwd", cwd}
			if sampling {
				//lint:ignore SA1019 a host that declares MCP sampling (deprecated by SEP-2577, kept during its window) is what this case is
				opts = &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return nil, io.EOF
				}}
				args = append(args, "--sampling")
			}
			res, err := testbin.Stdio(t, testbin.ServeCmd(t, binary, cwd), opts).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var served []string
			for _, tool := range res.Tools {
				served = append(served, tool.Name)
			}
			cmd := exec.Command(binary, args...)
			cmd.Env = testbin.HermeticEnv(t)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("tools: %v", err)
			}
			var listed struct{ Tools []struct{ Name string } }
			if err := json.Unmarshal(out, &listed); err != nil {
				t.Fatalf("tools --json: %v\n%s", err, out)
			}
			var names []string
			for _, tool := range listed.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(served)
			slices.Sort(names)
			if !slices.Equal(names, served) {
				t.Errorf("agent-mcp %s lists\n  %v\nthe host gets\n  %v", strings.Join(args, " "), names, served)
			}
			if slices.Contains(served, "Agent") != sampling {
				t.Errorf("Agent offered %v to a host with sampling %v", !sampling, sampling)
			}
			if sampling {
				return
			}
			cmd = exec.Command(binary, "tools", "--cwd", cwd)
			cmd.Env = testbin.HermeticEnv(t)
			out, _ = cmd.Output()
			if !strings.Contains(string(out), "Agent: offered only to a host that declares MCP sampling") {
				t.Errorf("the table does not say where Agent is:\n%s", out)
			}
		})
	}
}

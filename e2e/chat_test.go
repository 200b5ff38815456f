package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// chatRun runs the real binary's chat command in a hermetic home, with
// the project directory dir.
type chatRun struct {
	home, dir string
	env       []string
}

func newChatRun(t *testing.T) *chatRun {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &chatRun{home: home, dir: dir, env: []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"TMPDIR=" + os.TempDir(),
		// A backoff "second" lasts a millisecond: retries never wait for real.
		"AGENT_MCP_RETRY_UNIT=1ms",
	}}
}

func (c *chatRun) run(t *testing.T, stdin string, extraEnv []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"chat"}, args...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func anthropicEnv() []string { return []string{"ANTHROPIC_API_KEY=test-key"} }

func TestChatPrint_text(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	srv := testmodel.NewServer(t, testmodel.Say("Hello from the model."))
	out, errOut, code := c.run(t, "", anthropicEnv(), "-p", "say hello", "--model", "anthropic/test-model", "--base-url", srv.URL)
	if code != 0 || out != "Hello from the model.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	sys, _ := json.Marshal(reqs[0].Body["system"])
	for _, want := range []string{"Working directory: " + c.dir, "not in a git repository", "Read:"} {
		if !strings.Contains(string(sys), want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
}

func TestChatPrint_json_with_upstream_tool(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	up := testmodel.NewUpstreamHTTP(t)
	mcpJSON := `{"mcpServers":{"up":{"type":"http","url":"${UP_URL}"},"dead":{"command":"/nonexistent/server"}}}`
	if err := os.WriteFile(filepath.Join(c.dir, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "t1", Name: "mcp__up__echo", Input: `{"text":"over mcp"}`}),
		testmodel.Say("done"))
	out, errOut, code := c.run(t, "", append(anthropicEnv(), "UP_URL="+up),
		"-p", "use the tool", "--output-format", "json", "--model", "anthropic/test-model", "--base-url", srv.URL,
		"--allowed-tools", "mcp__up", "--trust-project")
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if n := strings.Count(errOut, "dead"); n != 1 || !strings.Contains(errOut, `warning: MCP server "dead" is unavailable: `) {
		t.Errorf("stderr should report the dead server once, in one warning: %q", errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %q", out)
	}
	if res["type"] != "result" || res["subtype"] != "success" || res["is_error"] != false || res["result"] != "done" || res["num_turns"] != 2.0 {
		t.Errorf("result = %v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs, _ := json.Marshal(reqs[1].Body["messages"])
	if !strings.Contains(string(msgs), `"tool_use_id":"t1"`) || !strings.Contains(string(msgs), `echo: over mcp`) {
		t.Errorf("second request's messages lack the tool result: %s", msgs)
	}
}

func TestChatPrint_stream_json_openai_stdin(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("alpha\nbeta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}),
		testmodel.Say("It says alpha and beta."))
	out, errOut, code := c.run(t, "what is in notes.txt?", []string{"OPENAI_API_KEY=test-key"},
		"-p", "--output-format", "stream-json", "--model", "openai/test-model", "--base-url", srv.URL+"/v1")
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var types []string
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON", sc.Text())
		}
		lines = append(lines, m)
		types = append(types, m["type"].(string))
	}
	if strings.Join(types, ",") != "system,assistant,user,assistant,result" {
		t.Fatalf("line types = %v\n%s", types, out)
	}
	if lines[0]["subtype"] != "init" || lines[0]["model"] != "openai/test-model" {
		t.Errorf("init = %v", lines[0])
	}
	user, _ := json.Marshal(lines[2])
	if !strings.Contains(string(user), "alpha") || !strings.Contains(string(user), `"tool_use_id":"r1"`) {
		t.Errorf("tool result line = %s", user)
	}
	if lines[4]["result"] != "It says alpha and beta." || lines[4]["subtype"] != "success" {
		t.Errorf("result line = %v", lines[4])
	}
	first, _ := json.Marshal(srv.Requests()[0].Body["messages"])
	if !strings.Contains(string(first), "what is in notes.txt?") {
		t.Errorf("the stdin prompt was not sent: %s", first)
	}
}

func TestChatPrint_exit_codes(t *testing.T) {
	t.Parallel()
	t.Run("max_turns", func(t *testing.T) {
		c := newChatRun(t)
		srv := testmodel.NewServer(t, testmodel.Call(testmodel.ToolCall{ID: "t1", Name: "TodoWrite",
			Input: `{"todos":[{"content":"a","status":"pending","activeForm":"doing a"}]}`}))
		out, errOut, code := c.run(t, "", anthropicEnv(), "-p", "plan", "--max-turns", "1", "--output-format", "json",
			"--model", "anthropic/test-model", "--base-url", srv.URL)
		if code != exitMaxTurns || !strings.Contains(out, `"subtype":"error_max_turns"`) {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 3 and error_max_turns", code, out, errOut)
		}
	})
	t.Run("missing_key", func(t *testing.T) {
		c := newChatRun(t)
		out, errOut, code := c.run(t, "", nil, "-p", "hi", "--model", "anthropic/claude-x")
		if code != 1 || out != "" || !strings.Contains(errOut, "ANTHROPIC_API_KEY is not set") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line naming ANTHROPIC_API_KEY", code, out, errOut)
		}
	})
	t.Run("no_prompt", func(t *testing.T) {
		c := newChatRun(t)
		_, errOut, code := c.run(t, "", anthropicEnv(), "-p", "--model", "anthropic/m")
		if code != 2 || !strings.Contains(errOut, "no prompt") {
			t.Errorf("exit %d, stderr %q; want 2 and 'no prompt'", code, errOut)
		}
	})
	t.Run("bad_output_format", func(t *testing.T) {
		c := newChatRun(t)
		_, errOut, code := c.run(t, "", anthropicEnv(), "-p", "x", "--output-format", "yaml")
		if code != 1 || !strings.Contains(errOut, "expected text, json or stream-json") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}

func TestChatPrint_continue(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	srv := testmodel.NewServer(t, testmodel.Say("First answer."), testmodel.Say("Second answer."))
	args := []string{"--model", "anthropic/test-model", "--base-url", srv.URL}
	if out, errOut, code := c.run(t, "", anthropicEnv(), append([]string{"-p", "first question"}, args...)...); code != 0 {
		t.Fatalf("exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code := c.run(t, "", anthropicEnv(), append([]string{"-p", "second question", "--continue", "--output-format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d, %q %q", code, out, errOut)
	}
	msgs, _ := json.Marshal(srv.Requests()[1].Body["messages"])
	for _, want := range []string{"first question", "First answer.", "second question"} {
		if !strings.Contains(string(msgs), want) {
			t.Errorf("continued request lacks %q: %s", want, msgs)
		}
	}
	var res map[string]any
	_ = json.Unmarshal([]byte(out), &res)
	id, _ := res["session_id"].(string)
	if id == "" {
		t.Fatalf("no session_id in %q", out)
	}
	if _, err := os.Stat(filepath.Join(c.home, "state", "agent-mcp", "conversations", id+".jsonl")); err != nil {
		t.Errorf("conversation file: %v", err)
	}
}

func TestChatInteractive_plain_stdin(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	srv := testmodel.NewServer(t, testmodel.Say("Hi there."))
	out, errOut, code := c.run(t, "/help\n/mode plan\n/tools\nhello\n/exit\n", anthropicEnv(),
		"--model", "anthropic/test-model", "--base-url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"/permissions", "Mode: plan", "Read", "Hi there.", "tokens:"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

func TestChat_retries_overloaded(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			c := newChatRun(t)
			srv := testmodel.NewServer(t, testmodel.Overloaded(), testmodel.Overloaded(), testmodel.Overloaded(), testmodel.Say("Made it."),
				testmodel.Overloaded(), testmodel.Say("Printed."))
			env, args := modelFlags(format, srv)
			out, errOut, code := c.run(t, "hello\n/exit\n", env, args...)
			if code != 0 || !strings.Contains(out, "Made it.") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			for i := 2; i <= 4; i++ {
				if want := fmt.Sprintf(", attempt %d/10 (", i); !strings.Contains(out, want) {
					t.Errorf("stdout lacks the retry notice %q:\n%s", want, out)
				}
			}
			if !strings.Contains(out, "HTTP 529") {
				t.Errorf("the notices do not say what failed:\n%s", out)
			}
			out, errOut, code = c.run(t, "", env, append([]string{"-p", "again"}, args...)...)
			if code != 0 || out != "Printed.\n" {
				t.Errorf("-p: exit %d, stdout %q (want only the answer), stderr %q", code, out, errOut)
			}
			if n := len(srv.Requests()); n != 6 {
				t.Errorf("%d requests, want 6", n)
			}
		})
	}
}

// TestChatPrint_retries_and_cost: print mode says each retry on stderr,
// one line each (stdout stays the answer alone), and its JSON result
// gives the run's estimated cost from the price table, beside the tokens;
// a model with no known price gets tokens only.
func TestChatPrint_retries_and_cost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model string
		cost  float64 // 0: no cost field
	}{
		// 1000 in at $3 and 200 out at $15 per million tokens.
		{"anthropic/claude-sonnet-4-5", 0.006},
		{"anthropic/test-model", 0},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			answer := testmodel.Say("Made it.")
			answer.InputTokens, answer.OutputTokens = 1000, 200
			srv := testmodel.NewServer(t, testmodel.Overloaded(), testmodel.Overloaded(), answer)
			out, errOut, code := c.run(t, "", anthropicEnv(), "-p", "hello", "--output-format", "json",
				"--model", tc.model, "--base-url", srv.URL)
			if code != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			var retries []string
			for _, l := range strings.Split(errOut, "\n") {
				if strings.Contains(l, "retrying") {
					retries = append(retries, l)
				}
			}
			if len(retries) != 2 || !strings.HasPrefix(retries[0], "agent-mcp: ") || !strings.Contains(retries[0], "HTTP 529") ||
				!strings.Contains(retries[0], "attempt 2/10") || !strings.Contains(retries[1], "attempt 3/10") {
				t.Errorf("stderr should say each retry in one line:\n%s", errOut)
			}
			var res map[string]any
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("stdout is not one JSON object: %q", out)
			}
			usage, _ := res["usage"].(map[string]any)
			if usage["input_tokens"] != 1000.0 || usage["output_tokens"] != 200.0 {
				t.Errorf("usage = %v", res["usage"])
			}
			cost, has := res["total_cost_usd"].(float64)
			switch {
			case tc.cost == 0 && has:
				t.Errorf("a model with no known price got a cost: %v", res["total_cost_usd"])
			case tc.cost != 0 && (!has || cost < tc.cost*0.999 || cost > tc.cost*1.001):
				t.Errorf("total_cost_usd = %v, want %v", res["total_cost_usd"], tc.cost)
			}
		})
	}
}

func TestChatInteractive_custom_commands_and_attached_files(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(c.dir, ".claude", "commands", "review.md"), "---\ndescription: Review a file with care\n---\nReview $ARGUMENTS carefully.\n")
	write(filepath.Join(c.home, ".claude", "commands", "review.md"), "The project's command wins over this one.\n")
	write(filepath.Join(c.home, ".claude", "commands", "git", "hello.md"), "Say hello.\n")
	write(filepath.Join(c.dir, "notes.txt"), "alpha\nbeta\n")
	srv := testmodel.NewServer(t, testmodel.Say("Reviewed."), testmodel.Say("Hello."), testmodel.Say("Read it."))
	env, args := modelFlags("openai", srv)
	out, errOut, code := c.run(t, "/review main.go\n/git:hello twice\n/help\nlook at @notes.txt, please\n/exit\n", env, args...)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"/review", "Review a file with care", "/git:hello", "Attached notes.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	reqs := requireRequests(t, srv, 3, out, errOut)
	last := func(s sent) string { return textOf(s.msgs[len(s.msgs)-1]["content"]) }
	if got := last(reqs[0]); got != "Review main.go carefully." {
		t.Errorf("/review sent %q", got)
	}
	if got := last(reqs[1]); got != "Say hello.\n\nARGUMENTS: twice" {
		t.Errorf("/git:hello sent %q", got)
	}
	if got := last(reqs[2]); !strings.HasPrefix(got, "look at @notes.txt, please") || !strings.Contains(got, "<file path=\"notes.txt\">\nalpha\nbeta\n</file>") {
		t.Errorf("the attached file was not sent: %q", got)
	}
}

func TestChatInteractive_compact_with_instructions(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t, testmodel.Say("The port is 8080."), testmodel.Say("We settled on port 8080."), testmodel.Say("Still 8080."))
	env, args := modelFlags("anthropic", srv)
	out, errOut, code := c.run(t, "which port?\n/compact keep the port number\nand now?\n/exit\n", env, args...)
	if code != 0 || !strings.Contains(out, "Compacted 2 message(s) into a summary.") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	reqs := requireRequests(t, srv, 3, out, errOut)
	if d := reqs[1].dump(); !strings.Contains(d, "keep the port number") || !strings.Contains(d, "The port is 8080.") {
		t.Errorf("the summary request lacks the instructions or the conversation: %s", d)
	}
	d := reqs[2].dump()
	if !strings.Contains(d, "We settled on port 8080.") || strings.Contains(d, "which port?") || !strings.Contains(d, "and now?") {
		t.Errorf("the request after /compact is not the summary and the new prompt: %s", d)
	}
}

// In print mode nobody can approve a call: every refusal is in the JSON
// result and on stderr, and the model is told the user was not available,
// with the flag and rule that would allow the call.
func TestChatPrint_refusals_reported(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "e1", Name: "Edit", Input: `{"file_path":"notes.txt","old_string":"two","new_string":"deux"}`}),
		testmodel.Say("I could not edit it."))
	out, errOut, code := c.run(t, "", anthropicEnv(),
		"-p", "translate", "--output-format", "json", "--model", "anthropic/test-model", "--base-url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(c.dir, "notes.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("the refused edit changed the file: %q", b)
	}
	var res struct {
		Denials []struct {
			Tool   string          `json:"tool_name"`
			ID     string          `json:"tool_use_id"`
			Input  json.RawMessage `json:"tool_input"`
			Reason string          `json:"reason"`
			Rule   string          `json:"rule"`
		} `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %q", out)
	}
	if len(res.Denials) != 1 || res.Denials[0].Tool != "Edit" || res.Denials[0].ID != "e1" ||
		!strings.Contains(string(res.Denials[0].Input), "deux") || !strings.Contains(res.Denials[0].Rule, "notes.txt") {
		t.Errorf("permission_denials = %+v, want the Edit", res.Denials)
	}
	if !strings.Contains(errOut, "refused Edit (e1)") {
		t.Errorf("stderr does not report the refusal: %q", errOut)
	}
	text, _, _ := decodeRequest(srv.Requests()[2]).toolResult("e1")
	for _, want := range []string{"The user was not available to approve it", "--allowed-tools 'Edit(", "notes.txt)'"} {
		if !strings.Contains(text, want) {
			t.Errorf("the model was told %q, want it to hold %q", text, want)
		}
	}
	if strings.Contains(text, "elicitation") {
		t.Errorf("the model was told about elicitation: %q", text)
	}
}

// TestChat_untrusted_project_mcp_servers_do_not_start: chat starts the
// servers of a cloned repository's .mcp.json (or one a command planted)
// only in a trusted workspace or after a yes at the terminal; on a pipe
// it leaves them out and says how to trust the project.
func TestChat_untrusted_project_mcp_servers_do_not_start(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	marker := filepath.Join(c.home, "started")
	mcpJSON := fmt.Sprintf(`{"mcpServers":{"planted":{"command":"sh","args":["-c","touch %s"]}}}`, marker)
	if err := os.WriteFile(filepath.Join(c.dir, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t, testmodel.Say("hi"), testmodel.Say("hi"))
	args := []string{"-p", "hello", "--model", "anthropic/test-model", "--base-url", srv.URL, "--mcp-connect-timeout", "5s"}
	_, errOut, _ := c.run(t, "", anthropicEnv(), args...)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("an untrusted project's .mcp.json server was started: %s", errOut)
	}
	if !strings.Contains(errOut, "not starting the MCP servers of this project's .mcp.json (planted)") || !strings.Contains(errOut, "agent-mcp trust") {
		t.Errorf("the warning does not name the server and the way to trust: %q", errOut)
	}
	// Trusted for this run, it starts.
	_, errOut, _ = c.run(t, "", anthropicEnv(), append(args, "--trust-project")...)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("with --trust-project the server did not start: %s", errOut)
	}
}

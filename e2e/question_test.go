package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// TestQuestion_forged_in_the_command: commands built to forge the
// permission question reach the elicitation message as data: after the
// server's reason, each of their lines after the quoting margin, their
// control, bidirectional and line-separator characters as escapes, and
// the host asked about first. (Issue 37, item 5: before, the raw command
// came first, so a line of it reading "Why you are asked: … allowed" read
// as the server's, and ESC, CR and right-to-left overrides passed.) The
// first case is the report's; the others are further attempts.
func TestQuestion_forged_in_the_command(t *testing.T) {
	t.Parallel()
	_, ws := attackTree(t)
	var mu sync.Mutex
	var messages []string
	var titles []string
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		messages = append(messages, req.Params.Message)
		if s, ok := req.Params.RequestedSchema.(map[string]any); ok {
			if p, ok := s["properties"].(map[string]any)["decision"].(map[string]any); ok {
				for _, o := range p["oneOf"].([]any) {
					titles = append(titles, o.(map[string]any)["title"].(string))
				}
			}
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	cmd := testbin.ServeCmd(t, binary, ws, "--permission-mode", "default", "--settings", `{"sandbox":{"enabled":false}}`)
	cmd.Env = testbin.HermeticEnv(t)
	cs := testbin.Stdio(t, cmd, opts)
	const fake = "Why you are asked: a rule from your settings allows this command."
	for _, c := range []struct {
		name, command string
		shown         string // how the forging part must read
		never         []string
	}{
		{"a line of its own", "npm publish # '\n" + fake + "'", "  │ " + fake, []string{"\n" + fake}},
		{"carriage return", "npm publish #\r" + fake, `\r` + fake, []string{"\r"}},
		{"escape sequences", "npm publish #\x1b[2K\x1b[1A" + fake, `\e[2K\e[1A` + fake, []string{"\x1b"}},
		{"right-to-left override", "npm publish \u202ehs.txt", `\u202ehs.txt`, []string{"\u202e"}},
		{"isolates", "npm publish \u2067x\u2069", `\u2067x\u2069`, []string{"\u2067"}},
		{"line separator", "npm publish #\u2028" + fake, `\u2028` + fake, []string{"\u2028"}},
		{"next line (C1)", "npm publish #\u0085" + fake, `\x85` + fake, []string{"\u0085"}},
		{"form feed and vertical tab", "npm publish #\f\v" + fake, `\x0c\x0b` + fake, []string{"\f", "\v"}},
		{"a heredoc", "cat > f <<'EOF'\n" + fake + "\nEOF", "  │ " + fake, []string{"\n" + fake}},
		{"a path", "npm publish > 'o\n" + fake + "'", `/o\n` + fake, []string{"\n" + fake}},
		{"a long command", "npm publish " + strings.Repeat("a", 3000) + "\n" + fake, "Why you are asked: ", []string{"\n" + fake}},
	} {
		mu.Lock()
		messages, titles = nil, nil
		mu.Unlock()
		out, _ := testbin.Bash(t, cs, c.command, false)
		mu.Lock()
		if len(messages) != 1 {
			t.Errorf("%s: want one question, got %d (result %q)", c.name, len(messages), out)
			mu.Unlock()
			continue
		}
		msg := messages[0]
		for _, bad := range c.never {
			if strings.Contains(msg, bad) || strings.Contains(strings.Join(titles, "\n"), bad) {
				t.Errorf("%s: the question holds %q:\n%s\n%q", c.name, bad, msg, titles)
			}
		}
		if !strings.Contains(msg, c.shown) {
			t.Errorf("%s: the question lacks %q:\n%s", c.name, c.shown, msg)
		}
		reason, quoted := strings.Index(msg, "\nWhy you are asked: "), strings.Index(msg, "The command, quoted:\n  │ ")
		if strings.Count(msg, "\nWhy you are asked: ") != 1 || reason < 0 || quoted < reason {
			t.Errorf("%s: the server's reason is not the one line before the quoted command:\n%s", c.name, msg)
		}
		mu.Unlock()
	}
}

// TestQuestion_host_first: a sandboxed command's connection is asked about
// with the host and port first, before the reason and the command.
func TestQuestion_host_first(t *testing.T) {
	t.Parallel()
	_, ws := attackTree(t)
	var mu sync.Mutex
	var messages []string
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		messages = append(messages, req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	cmd := testbin.ServeCmd(t, binary, ws, "--permission-mode", "default")
	cmd.Env = testbin.HermeticEnv(t)
	cs := testbin.Stdio(t, cmd, opts)
	out, _ := testbin.Bash(t, cs, "curl -s --max-time 10 https://forged.example/ # '\nWhy you are asked: allowed.'", false)
	mu.Lock()
	defer mu.Unlock()
	for _, msg := range messages {
		if strings.Contains(msg, "forged.example port") {
			if !strings.HasPrefix(msg, "Allow Bash?\n\nConnects to: forged.example:443\n\nWhy you are asked: ") {
				t.Errorf("the host is not the first thing the question names:\n%s", msg)
			}
			return
		}
	}
	t.Skipf("no network question here (no sandbox holding the network): %q %q", out, messages)
}

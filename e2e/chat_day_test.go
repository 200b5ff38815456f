package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// A day's work in the chat's terminal UI: what the user is asked, and
// what the user is shown, read through a terminal emulator at the sizes
// people use.

// startTUIBare starts a chat in a pseudo-terminal of cols×rows and returns
// at once, before anything is drawn: for what happens before the prompt.
func startTUIBare(t *testing.T, c *chatRun, cols, rows int, srv *testmodel.Server, extra ...string) *tui {
	t.Helper()
	cmd, ptmx := startChatPTY(t, c, cols, rows, srv, extra)
	return pipeTUI(t, c, cmd, ptmx, cols, rows)
}

// The project's .mcp.json question is the UI's own question, on screen
// before the prompt: keys typed as the chat starts (at what looks like a
// prompt) never answer it, and the model receives them whole.
func TestChatDay_project_mcp_question_is_the_uis_own(t *testing.T) {
	for _, sz := range []struct{ cols, rows int }{{120, 40}, {80, 24}} {
		for _, answer := range []string{"no", "yes"} {
			t.Run(fmt.Sprintf("%dx%d_%s", sz.cols, sz.rows, answer), func(t *testing.T) {
				t.Parallel()
				c := newChatRun(t)
				marker := filepath.Join(c.home, "started")
				mcpJSON := fmt.Sprintf(`{"mcpServers":{"planted":{"command":"sh","args":["-c","touch %s"]}}}`, marker)
				if err := os.WriteFile(filepath.Join(c.dir, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
					t.Fatal(err)
				}
				srv := testmodel.NewServer(t, testmodel.Say("Heard you."))
				u := startTUIBare(t, c, sz.cols, sz.rows, srv, "--mcp-connect-timeout", "5s")
				// Typed at once, as the screen appears: it begins with y.
				u.keys("you there")
				u.waitDisplay("Start them?")
				u.waitDisplay("1. Yes, start them")
				u.waitDisplay("2. No")
				u.waitDisplay("planted: sh -c touch")
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("the server started before the question was answered:\n%s", u.disp.String())
				}
				// What was typed waits for the prompt, shown as such.
				u.waitDisplay("typed for the prompt: you there")
				// A digit answers without Enter. (Enter here would queue
				// the typed text as a prompt, not answer.)
				if answer == "yes" {
					u.keys("1")
				} else {
					u.keys("2")
				}
				u.waitDisplay("Type /help for commands.")
				// What was typed before the question waits in the editor.
				u.waitDisplay("> you there")
				u.keys("\r")
				u.waitDisplay("Heard you.")
				_, err := os.Stat(marker)
				if started := err == nil; started != (answer == "yes") {
					t.Errorf("answered %s, the server started: %v", answer, started)
				}
				reqs := srv.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d requests", len(reqs))
				}
				r := decodeRequest(reqs[0])
				if got := textOf(r.msgs[len(r.msgs)-1]["content"]); got != "you there" {
					t.Errorf("the model received %q, want %q", got, "you there")
				}
				u.exit()
			})
		}
	}
}

// The spinner's context gauge reads the last model call's context, not
// the sum of the turn's calls (each of which sends the whole
// conversation): mid-turn it shows what the turn's end line shows.
func TestChatDay_spinner_gauge_is_the_last_calls_context(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	srv := testmodel.NewServer(t)
	u := startTUI(t, c, "anthropic", srv)
	seen := make(chan struct{})
	first := testmodel.Call(testmodel.ToolCall{ID: "g1", Name: "Glob", Input: `{"pattern":"*.none"}`})
	first.InputTokens, first.OutputTokens = 64000, 100
	srv.Push(first, testmodel.Reply{Parts: []testmodel.Part{{Text: "Looked."}, {Usage: 50},
		{Wait: func(ctx context.Context) error {
			select {
			case <-seen:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}}, InputTokens: 64200, OutputTokens: 60})
	u.keys("look\r")
	u.waitDisplay("↑ 128200 ↓ 150 tokens")
	spin := regexp.MustCompile(`↑ 128200 ↓ 150 tokens · (\d+)% of the context`).FindStringSubmatch(u.disp.String())
	close(seen)
	endLine := regexp.MustCompile(`tokens: \d+ in, \d+ out .*· (\d+)% of the context`)
	u.waitDisplayIs("the turn's token line", endLine.MatchString)
	end := endLine.FindStringSubmatch(u.disp.String())
	if spin == nil || end == nil {
		t.Fatalf("no gauge: spinner %v, end line %v:\n%s", spin, end, u.scr.String())
	}
	if spin[1] != end[1] || end[1] == "100" {
		t.Errorf("mid-turn the gauge said %s%%, the turn's end line %s%%: the spinner adds up the calls", spin[1], end[1])
	}
	u.exit()
}

// /permissions says what is asked: a sandboxed Bash write that runs
// without a question is not reported as asked about, and one that is
// asked is.
func TestChatDay_permissions_says_what_is_asked(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	srv := testmodel.NewServer(t)
	u := startTUI(t, c, "anthropic", srv)
	u.keys("/permissions\r")
	u.wait("Rules:")
	text := u.scr.String()
	if strings.Contains(text, "every call that is not read-only inside the working directories is asked about") {
		t.Errorf("/permissions says every call is asked:\n%s", text)
	}
	srv.Push(testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"touch made"}`}), testmodel.Say("Made."))
	u.keys("make it\r")
	u.waitDisplayIs("a question or the reply", func(s string) bool {
		return strings.Contains(s, "Allow ") || strings.Contains(s, "Made.")
	})
	asked := strings.Contains(u.disp.String(), "Allow ")
	if asked {
		u.keys("\x1b")
		u.waitDisplay("Made.")
	}
	auto := strings.Contains(text, "Bash: runs in the sandbox without a question")
	if asked == auto {
		t.Errorf("the Bash write was asked about: %v, but /permissions said:\n%s", asked, text)
	}
	u.exit()
}

// A prompt queued while a turn runs is not sent when Esc interrupts the
// turn: it goes back to the editor, to be sent (or not) by the user.
func TestChatDay_esc_puts_a_queued_prompt_back(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	srv := testmodel.NewServer(t)
	u := startTUISized(t, c, 80, 24, srv)
	srv.Push(testmodel.Reply{Parts: []testmodel.Part{{Text: "Thinking it over"},
		{Wait: func(ctx context.Context) error { <-ctx.Done(); return nil }}}})
	u.keys("first\r")
	u.waitDisplay("Thinking it over")
	u.keys("second thought\r")
	u.waitDisplay("queued: second thought")
	u.keys("\x1b")
	u.wait("Interrupted")
	u.waitDisplay("> second thought")
	u.waitDisplayGone("queued: second thought")
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests after Esc, want 1: the queued prompt was sent", n)
	}
	srv.Push(testmodel.Say("Now then."))
	u.keys("\r")
	u.waitDisplay("Now then.")
	r := decodeRequest(srv.Requests()[1])
	if got := textOf(r.msgs[len(r.msgs)-1]["content"]); got != "second thought" {
		t.Errorf("sent %q, want %q", got, "second thought")
	}
	u.exit()
}

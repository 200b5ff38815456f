package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// The full terminal UI, driven in a pseudo-terminal as a user would: the
// assertions are on what the screen shows (escape sequences taken out, or
// kept where colours are the point) and on what the model server received.

// tui is a chat running in a pseudo-terminal.
type tui struct {
	t      *testing.T
	c      *chatRun
	ptmx   *os.File
	scr    *screen
	disp   *display
	exited chan error
	at     int // the screen offset the next wait starts from
}

func startTUI(t *testing.T, c *chatRun, format string, srv *testmodel.Server, extra ...string) *tui {
	t.Helper()
	env, args := modelFlags(format, srv)
	cmd := exec.Command(binary, append(append([]string{"chat"}, args...), extra...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), append(env, "TERM=xterm-256color")...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	return attachTUI(t, c, cmd, ptmx, 120, 40, extra)
}

// attachTUI follows a chat started in ptmx, a terminal of cols×rows,
// until its terminal UI has started.
func attachTUI(t *testing.T, c *chatRun, cmd *exec.Cmd, ptmx *os.File, cols, rows int, extra []string) *tui {
	t.Helper()
	u := pipeTUI(t, c, cmd, ptmx, cols, rows)
	// Keys typed from now on reach the editor (and wait there for the
	// prompt, if need be).
	if slices.Contains(extra, "--fullscreen") {
		// The alternate screen is drawn cell by cell: read it as shown.
		u.waitDisplay("Type /help for commands.")
	} else {
		u.wait("Type /help for commands.")
	}
	// The banner is printed before the renderer takes the terminal (it
	// turns bracketed paste on then). A turn the scripted model answers at
	// once could otherwise be printed before that too, where the inline
	// renderer's first frame scrolls it off the emulated display.
	u.waitRaw("the terminal UI to start (bracketed paste on)", "\x1b[?2004h")
	return u
}

// pipeTUI reads the chat's terminal ptmx into a screen and a terminal
// emulator of cols×rows, and ends the chat with the test; it returns at
// once, before anything is drawn.
func pipeTUI(t *testing.T, c *chatRun, cmd *exec.Cmd, ptmx *os.File, cols, rows int) *tui {
	u := &tui{t: t, c: c, ptmx: ptmx, scr: &screen{}, disp: newDisplay(t, cols, rows), exited: make(chan error, 1)}
	go func() { u.exited <- cmd.Wait() }()
	go func() { _, _ = io.Copy(io.MultiWriter(u.scr, u.disp), ptmx) }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-u.exited
		}
		ptmx.Close()
	})
	return u
}

// waitRaw waits until the raw output, escapes and all, holds want.
func (u *tui) waitRaw(what, want string) {
	u.t.Helper()
	if err := testbin.Poll(u.t, func() bool { return strings.Contains(u.scr.Raw(), want) }); err != nil {
		u.t.Fatalf("never saw %s (%v):\n%q", what, err, u.scr.Raw())
	}
}

// wait waits for want on the screen after the last thing waited for.
func (u *tui) wait(want string) {
	u.t.Helper()
	u.at = waitScreen(u.t, u.scr, u.at, want)
}

// waitDisplay waits until the terminal's screen, as a terminal would draw
// it, shows want: for what is redrawn in place (a renderer rewrites only
// the cells that changed, so the stream need not hold want in one piece).
func (u *tui) waitDisplay(want string) {
	u.t.Helper()
	if err := testbin.Poll(u.t, func() bool { return strings.Contains(u.disp.String(), want) }); err != nil {
		u.t.Fatalf("the display never showed %q (%v):\n%s", want, err, u.disp.String())
	}
}

// waitDisplayIs waits until the display satisfies ok.
func (u *tui) waitDisplayIs(what string, ok func(string) bool) {
	u.t.Helper()
	if err := testbin.Poll(u.t, func() bool { return ok(u.disp.String()) }); err != nil {
		u.t.Fatalf("the display never showed %s (%v):\n%s", what, err, u.disp.String())
	}
}

// waitDisplayGone waits until the display no longer shows gone.
func (u *tui) waitDisplayGone(gone string) {
	u.t.Helper()
	if err := testbin.Poll(u.t, func() bool { return !strings.Contains(u.disp.String(), gone) }); err != nil {
		u.t.Fatalf("the display still shows %q (%v):\n%s", gone, err, u.disp.String())
	}
}

// display is a terminal emulator fed the program's output: what a user's
// terminal would show now.
type display struct {
	mu  sync.Mutex
	emu *vt.Emulator
}

func newDisplay(t *testing.T, cols, rows int) *display {
	d := &display{emu: vt.NewEmulator(cols, rows)}
	// The emulator answers the program's queries into a pipe nobody
	// else reads: drain it so that Write never blocks.
	drained := make(chan struct{})
	go func() { defer close(drained); _, _ = io.Copy(io.Discard, d.emu) }()
	t.Cleanup(func() {
		// Closing the answers' pipe ends the drain (Emulator.Close would
		// race with its Read).
		if c, ok := d.emu.InputPipe().(io.Closer); ok {
			_ = c.Close()
			<-drained
		}
	})
	return d
}

func (d *display) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.emu.Write(p)
}

// String is the screen's text.
func (d *display) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.emu.String()
}

// onDisplay is a scripted wait that holds the model's stream until the
// display shows want.
func onDisplay(d *display, want string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for !strings.Contains(d.String(), want) {
			select {
			case <-ctx.Done():
				return errors.New("the display never showed " + want + ":\n" + d.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
		return nil
	}
}

func (u *tui) keys(s string) {
	u.t.Helper()
	if _, err := io.WriteString(u.ptmx, s); err != nil {
		u.t.Fatal(err)
	}
}

// exit types /exit and waits for a clean end.
func (u *tui) exit() {
	u.t.Helper()
	u.keys("/exit\r")
	select {
	case err := <-u.exited:
		if err != nil {
			u.t.Errorf("chat ended with %v:\n%s", err, u.scr.String())
		}
	case <-testbin.WaitDone(u.t):
		u.t.Fatalf("chat did not exit on /exit:\n%s", u.scr.String())
	}
}

// onScreen is a scripted wait that holds the model's stream until the
// screen shows want.
func onScreen(s *screen, want string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for !strings.Contains(s.String(), want) {
			select {
			case <-ctx.Done():
				return errors.New("the screen never showed " + want)
			case <-time.After(10 * time.Millisecond):
			}
		}
		return nil
	}
}

func TestChatTUI_markdown_rendered_and_spinner_before_the_first_token(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			c := newChatRun(t)
			reply := "## The Plan\n\nFirst **read** the file.\n\n```go\nfunc main() { fmt.Println(\"hi\") }\n```\n"
			srv := testmodel.NewServer(t)
			u := startTUI(t, c, format, srv)
			// The stream stays silent until the spinner is on screen.
			srv.Push(testmodel.Reply{Parts: []testmodel.Part{{Wait: onScreen(u.scr, "Working…")}, {Text: reply}}})
			u.keys("show me the plan\r")
			u.wait("Working…")
			u.wait("The Plan")
			u.wait("func main()")
			u.wait("tokens:")
			raw := u.scr.Raw()
			if strings.Contains(u.scr.String(), "```") {
				t.Errorf("the code fence was printed raw:\n%s", u.scr.String())
			}
			if !strings.Contains(u.scr.String(), "The Plan") || !regexp.MustCompile(`\x1b\[([0-9]+;)*1(;[0-9]+)*m(##(\x1b\[m)? )?(\x1b\[[0-9;]*m)*The`).MatchString(raw) {
				t.Errorf("the heading is not bold:\n%q", raw)
			}
			if !regexp.MustCompile(`\x1b\[([0-9;]*;)?(3[0-7]|9[0-7]|38;[0-9;]+)m(\x1b\[[0-9;]*m)*func`).MatchString(raw) {
				t.Errorf("the code block is not highlighted:\n%q", raw)
			}
			u.exit()
		})
	}
}

func TestChatTUI_edit_diff_coloured_and_failing_bash_output_shown(t *testing.T) {
	c := newChatRun(t)
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("keep me\nold line\nkeep me too\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "e1", Name: "Edit", Input: `{"file_path":"notes.txt","old_string":"old line","new_string":"new line"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"echo first-of-output; echo the-failing-test-name; exit 3"}`}),
		testmodel.Say("Done."))
	u := startTUI(t, c, "openai", srv, "--allowed-tools", "Read,Edit,Bash")
	u.keys("fix it\r")
	u.wait("Edit(")
	u.wait("Bash(")
	u.wait("Exit code 3")
	u.wait("the-failing-test-name")
	u.wait("Done.")
	raw := u.scr.Raw()
	if !regexp.MustCompile(`\x1b\[31m\s*\d+ -old line`).MatchString(raw) {
		t.Errorf("the removed line is not red:\n%q", raw)
	}
	if !regexp.MustCompile(`\x1b\[32m\s*\d+ \+new line`).MatchString(raw) {
		t.Errorf("the added line is not green:\n%q", raw)
	}
	if !strings.Contains(u.scr.String(), "first-of-output") {
		t.Errorf("the failing command's output is not all shown:\n%s", u.scr.String())
	}
	u.exit()
}

func TestChatTUI_paste_is_one_prompt_and_typed_ahead_keys_wait(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t)
	u := startTUI(t, c, "anthropic", srv)
	// The reply holds until the keys typed meanwhile are in the editor.
	// (On the display: the renderer may draw the keys between spinner
	// frames, so the stream need not hold them in one piece.)
	srv.Push(testmodel.Reply{Parts: []testmodel.Part{{Text: "Got both lines."}, {Wait: onDisplay(u.disp, "typed meanwhile")}}},
		testmodel.Say("Second answer."))
	u.keys("\x1b[200~first pasted line\nsecond pasted line\x1b[201~")
	u.wait("second pasted line")
	u.keys("\r")
	u.waitDisplay("Got both lines.") // live, so drawn in place (see waitDisplay)
	u.keys("typed meanwhile")
	u.wait("tokens:")
	if reply := u.scr.String()[strings.Index(u.scr.String(), "Got both lines."):]; strings.Contains(strings.SplitN(reply, "tokens:", 2)[0], "Got both lines.typed") {
		t.Errorf("typed-ahead keys were echoed into the reply:\n%s", u.scr.String())
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests after the paste, want 1", n)
	}
	first := decodeRequest(srv.Requests()[0])
	if got := textOf(first.msgs[len(first.msgs)-1]["content"]); got != "first pasted line\nsecond pasted line" {
		t.Errorf("the pasted prompt was sent as %q", got)
	}
	u.keys("\r") // sends what was typed ahead
	u.wait("Second answer.")
	second := decodeRequest(srv.Requests()[1])
	if got := textOf(second.msgs[len(second.msgs)-1]["content"]); got != "typed meanwhile" {
		t.Errorf("the typed-ahead prompt was sent as %q", got)
	}
	u.exit()
}

func TestChatTUI_overloaded_three_times_then_success(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			c := newChatRun(t)
			srv := testmodel.NewServer(t, testmodel.Overloaded(), testmodel.Overloaded(), testmodel.Overloaded(), testmodel.Say("Through at last."))
			u := startTUI(t, c, format, srv)
			u.keys("hello\r")
			u.wait("attempt 2/10")
			u.wait("attempt 3/10")
			u.wait("attempt 4/10")
			u.wait("Through at last.")
			if n := len(srv.Requests()); n != 4 {
				t.Errorf("%d requests, want 4", n)
			}
			u.exit()
		})
	}
}

func TestChatTUI_prompt_too_long_compacts_and_retries(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Say("The first answer."),
		testmodel.TooLong(),
		testmodel.Say("A summary of the first exchange."),
		testmodel.Say("Answered after compacting."))
	u := startTUI(t, c, "anthropic", srv)
	u.keys("first question\r")
	u.wait("The first answer.")
	u.wait("> ")
	u.keys("second question\r")
	u.wait("too long for the model")
	u.wait("Answered after compacting.")
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	retried := decodeRequest(reqs[3])
	if d := retried.dump(); !strings.Contains(d, "A summary of the first exchange.") || strings.Contains(d, "The first answer.") ||
		!strings.Contains(d, "second question") {
		t.Errorf("the retried request is not the compacted conversation: %s", d)
	}
	u.exit()
}

func TestChatTUI_model_switch_applies_to_the_next_request(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Reply{Parts: []testmodel.Part{{Text: "From the first model."}}, Model: "test-model"},
		testmodel.Reply{Parts: []testmodel.Part{{Text: "From the second model."}}, Model: "other-model"})
	u := startTUI(t, c, "anthropic", srv)
	u.keys("one\r")
	u.wait("From the first model.")
	u.keys("/model anthropic/other-model\r")
	u.wait("Model: anthropic/other-model")
	u.keys("two\r")
	u.wait("From the second model.")
	u.keys("/cost\r")
	u.wait("anthropic/other-model:")
	u.exit()
}

func TestChatTUI_ctrl_c_keeps_the_partial_reply(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			c := newChatRun(t)
			srv := testmodel.NewServer(t)
			u := startTUI(t, c, format, srv)
			// The reply stops halfway until the client goes away.
			srv.Push(testmodel.Reply{Parts: []testmodel.Part{{Text: "The first half of a reply"},
				{Wait: func(ctx context.Context) error { <-ctx.Done(); return nil }}, {Text: " never sent"}}},
				testmodel.Say("Carrying on."))
			u.keys("talk\r")
			// The streamed text is live, redrawn in place: the renderer
			// rewrites only the cells that changed, so the stream holds
			// it in one piece only once the turn has ended.
			u.waitDisplay("The first half of a reply")
			u.keys("\x03")
			u.wait("Interrupted")
			u.wait("> ")
			u.keys("go on\r")
			u.wait("Carrying on.")
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			msgs := decodeRequest(reqs[1]).msgs
			var roles []string
			for _, m := range msgs {
				roles = append(roles, m["role"].(string))
			}
			if strings.Join(roles, ",") != "user,assistant,user" {
				t.Fatalf("roles %v, want user,assistant,user", roles)
			}
			if got := textOf(msgs[1]["content"]); !strings.Contains(got, "The first half of a reply") || !strings.Contains(got, "[Interrupted by the user]") {
				t.Errorf("the interrupted reply was sent as %q", got)
			}
			u.exit()
		})
	}
}

func TestChatTUI_resume_picker_replays_and_continue_skips_a_cleared_conversation(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Say("Noted: zebra."),
		testmodel.Say("The word was zebra."),
		testmodel.Say("Still zebra."))
	u := startTUI(t, c, "anthropic", srv)
	u.keys("remember the word zebra\r")
	u.wait("Noted: zebra.")
	u.exit()

	u = startTUI(t, c, "anthropic", srv, "--resume")
	u.wait("Resume which conversation?")
	u.wait("2 messages · remember the word zebra")
	u.keys("\r")
	u.wait("> remember the word zebra")
	u.wait("Noted: zebra.")
	u.wait("Resumed conversation")
	u.keys("which word?\r")
	u.wait("The word was zebra.")
	if d := decodeRequest(srv.Requests()[1]).dump(); !strings.Contains(d, "remember the word zebra") || !strings.Contains(d, "Noted: zebra.") {
		t.Errorf("the resumed conversation was not sent: %s", d)
	}
	u.keys("/clear\r")
	u.wait("New conversation")
	u.exit()

	env, args := modelFlags("anthropic", srv)
	out, errOut, code := c.run(t, "", env, append([]string{"-p", "and now?", "--continue"}, args...)...)
	if code != 0 || out != "Still zebra.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if d := decodeRequest(srv.Requests()[2]).dump(); !strings.Contains(d, "which word?") {
		t.Errorf("--continue did not skip the empty conversation /clear started: %s", d)
	}
}

func TestChatTUI_extended_thinking(t *testing.T) {
	c := newChatRun(t)
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("alpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t,
		testmodel.Reply{Parts: []testmodel.Part{{Thinking: "Let me consider the notes first."},
			{Tool: &testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}}}},
		testmodel.Say("They say alpha."),
		testmodel.Say("No thinking now."))
	u := startTUI(t, c, "anthropic", srv, "--think")
	u.keys("read the notes\r")
	u.wait("Let me consider the notes first.")
	u.wait("They say alpha.")
	if !regexp.MustCompile(`\x1b\[[0-9;]*2[;0-9]*m[^\x1b]*Let me consider`).MatchString(u.scr.Raw()) {
		t.Errorf("the thinking is not dimmed:\n%q", u.scr.Raw())
	}
	u.keys("/think\r")
	u.wait("Extended thinking: off")
	u.keys("again\r")
	u.wait("No thinking now.")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if th, _ := reqs[0].Body["thinking"].(map[string]any); th["type"] != "enabled" || th["budget_tokens"] != 8192.0 {
		t.Errorf("first request's thinking = %v", reqs[0].Body["thinking"])
	}
	if !strings.Contains(string(reqs[1].Raw), `"signature":"sig-test"`) || !strings.Contains(string(reqs[1].Raw), `"thinking":"Let me consider the notes first."`) {
		t.Errorf("the signed thinking block did not go back with the tool result: %s", reqs[1].Raw)
	}
	if _, on := reqs[2].Body["thinking"]; on {
		t.Errorf("/think did not turn thinking off: %v", reqs[2].Body["thinking"])
	}
	u.exit()
}

func TestChatTUI_permission_prompt_with_diff_and_instead(t *testing.T) {
	c := newChatRun(t)
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The file is read first: an Edit of a file never read is refused
	// before anyone is asked.
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "e1", Name: "Edit", Input: `{"file_path":"notes.txt","old_string":"two","new_string":"deux"}`}),
		testmodel.Say("Understood."))
	u := startTUI(t, c, "openai", srv)
	u.keys("translate\r")
	u.wait("Allow Edit(")
	u.wait("Why you are asked")
	u.wait("No, and tell the model what to do instead")
	raw := u.scr.Raw()
	if !regexp.MustCompile(`\x1b\[31m\s*\d+ -two`).MatchString(raw) || !regexp.MustCompile(`\x1b\[32m\s*\d+ \+deux`).MatchString(raw) {
		t.Errorf("the prompt does not show the edit's diff in red and green:\n%q", raw)
	}
	u.keys("\x1b[B\x1b[B\x1b[B") // down to the fourth choice
	u.keys("\r")
	u.wait("What should the model do instead?")
	u.keys("keep the English words\r")
	u.wait("Understood.")
	if b, _ := os.ReadFile(filepath.Join(c.dir, "notes.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("the refused edit changed the file: %q", b)
	}
	text, _, ok := decodeRequest(srv.Requests()[2]).toolResult("e1")
	if !ok || !strings.Contains(text, "keep the English words") {
		t.Errorf("the refusal sent %q, want the user's instead", text)
	}
	u.exit()
}

func TestChat_plain_lines_with_no_color_on_a_terminal(t *testing.T) {
	for _, env := range []string{"NO_COLOR=1", "TERM=dumb", "NO_COLOR=1 --fullscreen", "TERM=dumb --fullscreen"} {
		t.Run(env, func(t *testing.T) {
			c := newChatRun(t)
			srv := testmodel.NewServer(t, testmodel.Say("# Plain\n\nanswer"))
			e, args := modelFlags("anthropic", srv)
			env, flag, _ := strings.Cut(env, " ")
			if flag != "" {
				args = append(args, flag)
			}
			cmd := exec.Command(binary, append([]string{"chat"}, args...)...)
			cmd.Dir = c.dir
			cmd.Env = append(append(append([]string{}, c.env...), e...), "TERM=xterm-256color", env)
			ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
			if err != nil {
				t.Fatal(err)
			}
			defer ptmx.Close()
			scr := &screen{}
			go func() { _, _ = io.Copy(scr, ptmx) }()
			at := waitScreen(t, scr, 0, "> ")
			_, _ = io.WriteString(ptmx, "hi\r")
			at = waitScreen(t, scr, at, "# Plain")
			waitScreen(t, scr, at, "> ")
			_, _ = io.WriteString(ptmx, "/exit\r")
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit: %v\n%s", err, scr.String())
			}
			if raw := scr.Raw(); strings.Contains(raw, "\x1b[?2004h") || strings.Contains(raw, "Working…") || strings.Contains(raw, "\x1b[?1049h") {
				t.Errorf("the full terminal UI ran:\n%q", raw)
			}
		})
	}
}

func TestChatTUI_long_output_cut_then_expanded(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"seq 1 60 | sed 's/^/row-/'"}`}),
		testmodel.Say("Counted."))
	u := startTUI(t, c, "anthropic", srv, "--allowed-tools", "Bash")
	u.keys("count\r")
	u.wait("row-4")
	u.wait("… 52 more line(s) …")
	u.wait("row-60")
	u.wait("(ctrl+o to expand)")
	u.wait("Counted.")
	if strings.Contains(u.scr.String(), "row-30") {
		t.Fatalf("the middle of a successful command's output was shown before expanding:\n%s", u.scr.String())
	}
	u.keys("\x0f") // Ctrl-O: the transcript, every output expanded
	u.waitDisplay("every output expanded")
	u.keys("\x1b[H") // Home
	u.waitDisplay("row-30")
	u.keys("\x0f") // back
	u.waitDisplayGone("every output expanded")
	u.exit()
}

// Ctrl-O shows every earlier output cut short, not only the last: the
// transcript covers the inline screen with all of them expanded and
// scrolls; Ctrl-O again brings the screen back, and what was printed
// while the transcript was open reaches the scrollback after it.
func TestChatTUI_ctrl_o_shows_every_earlier_output(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"seq 1 60 | sed 's/^/first-/'"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "b2", Name: "Bash", Input: `{"command":"seq 1 60 | sed 's/^/second-/'"}`}),
		testmodel.Say("Both counted."))
	u := startTUI(t, c, "anthropic", srv, "--allowed-tools", "Bash")
	u.keys("count twice\r")
	u.wait("Both counted.")
	u.wait("tokens:")
	if s := u.scr.String(); strings.Contains(s, "first-30") || strings.Contains(s, "second-30") {
		t.Fatalf("an output's middle was shown before Ctrl-O:\n%s", s)
	}
	u.keys("\x0f")
	u.waitDisplay("every output expanded")
	u.waitDisplay("second-59") // it opens at the bottom
	u.keys("\x1b[H")           // Home: the first call's output, whole
	u.waitDisplay("first-30")
	for range 2 {
		u.keys("\x1b[6~") // PgDn
	}
	u.waitDisplay("second-20")
	u.keys("\x1b") // Esc goes back
	u.waitDisplayGone("every output expanded")
	u.waitDisplay("Both counted.")
	// A turn that ends while the transcript is open: its reply shows in
	// the transcript, and reaches the screen once it closes.
	srv.Push(testmodel.Reply{Parts: []testmodel.Part{{Text: "Working on it."},
		{Wait: onDisplay(u.disp, "every output expanded")}, {Text: " Arrived meanwhile."}}})
	u.keys("again\r")
	u.waitDisplay("Working on it.")
	u.keys("\x0f")
	u.waitDisplay("every output expanded")
	u.waitDisplay("Arrived meanwhile.")
	u.keys("\x0f")
	u.waitDisplayGone("every output expanded")
	u.waitDisplay("Arrived meanwhile.")
	u.waitDisplay("tokens: 0 in, 0 out · 1 model call(s)")
	u.exit()
}

// --fullscreen: the session in the alternate screen, the conversation in
// a view above the input that scrolls (PgUp/PgDn), Ctrl-O expanding and
// collapsing every cut output in place.
func TestChatTUI_fullscreen(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"seq 1 200 | sed 's/^/row-/'"}`}),
		testmodel.Say("## Counted\n\nTwo hundred rows."))
	u := startTUI(t, c, "anthropic", srv, "--fullscreen", "--allowed-tools", "Bash")
	if !strings.Contains(u.scr.Raw(), "\x1b[?1049h") {
		t.Fatalf("no alternate screen:\n%q", u.scr.Raw())
	}
	// The banner at the top, the input on the screen's last line.
	u.waitDisplayIs("the banner on top, the input at the bottom", func(d string) bool {
		lines := strings.Split(d, "\n")
		return len(lines) == 40 && strings.HasPrefix(lines[0], "agent-mcp chat") && strings.HasPrefix(lines[39], ">")
	})
	u.keys("count\r")
	u.waitDisplay("Two hundred rows.")
	u.waitDisplay("tokens:")
	u.waitDisplay("more line(s)")
	u.waitDisplay("row-200")
	if d := u.disp.String(); strings.Contains(d, "row-100") {
		t.Fatalf("the output's middle is shown before Ctrl-O:\n%s", d)
	}
	u.keys("\x0f") // Ctrl-O: expanded in place
	u.waitDisplay("row-190")
	for range 2 {
		u.keys("\x1b[5~") // PgUp, a screen each
	}
	u.waitDisplay("row-110")
	u.keys("\x0f") // collapsed again
	u.waitDisplayGone("row-110")
	u.waitDisplay("more line(s)")
	srv.Push(testmodel.Say("Next answer."))
	u.keys("next\r")
	u.waitDisplay("Next answer.")
	u.exit()
	// The terminal gets its own screen back.
	if err := testbin.Poll(t, func() bool { return strings.Contains(u.scr.Raw(), "\x1b[?1049l") }); err != nil {
		t.Fatalf("the alternate screen was not left at the end (%v):\n%q", err, u.scr.Raw()[max(0, len(u.scr.Raw())-400):])
	}
}

func TestChatTUI_spinner_counts_the_tokens_the_provider_reports(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			c := newChatRun(t)
			srv := testmodel.NewServer(t)
			u := startTUI(t, c, format, srv)
			// 200 characters are about 50 tokens by estimate; the provider
			// then reports 777 so far, and the stream holds until the test
			// has seen the spinner show the reported number (and the
			// input's): were it to hold only until the display showed it,
			// the turn could end before the test looked.
			seen := make(chan struct{})
			srv.Push(testmodel.Reply{Parts: []testmodel.Part{{Text: strings.Repeat("word ", 40)}, {Usage: 777},
				{Wait: func(ctx context.Context) error {
					select {
					case <-seen:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}}}, InputTokens: 4321, OutputTokens: 800})
			u.keys("count\r")
			u.wait("Working…")
			u.waitDisplay("↑ 4321 ↓ 777 tokens")
			close(seen)
			u.wait("tokens: 4321 in, 800 out")
			u.exit()
		})
	}
}

// /model keeps --base-url while the provider stays the same and gives
// another provider its own endpoint (its environment variable) and key:
// each scripted server counts the requests it got and the keys they
// carried.
func TestChatTUI_model_switch_across_providers_keeps_each_endpoint_and_key(t *testing.T) {
	c := newChatRun(t)
	anth := testmodel.NewServer(t,
		testmodel.Reply{Parts: []testmodel.Part{{Text: "From Anthropic."}}, Model: "test-model"},
		testmodel.Reply{Parts: []testmodel.Part{{Text: "Back at Anthropic."}}, Model: "other-model"},
		testmodel.Reply{Parts: []testmodel.Part{{Text: "A bare name."}}, Model: "third-model"})
	oai := testmodel.NewServer(t, testmodel.Reply{Parts: []testmodel.Part{{Text: "From OpenAI."}}, Model: "gpt-test"})
	c.env = append(c.env, "OPENAI_API_KEY=openai-secret", "OPENAI_BASE_URL="+oai.URL+"/v1")
	u := startTUI(t, c, "anthropic", anth) // --base-url is anth's
	for _, step := range []struct{ keys, want string }{
		{"one\r", "From Anthropic."},
		{"/model openai/gpt-test\r", "Model: openai/gpt-test"},
		{"two\r", "From OpenAI."},
		{"/model anthropic/other-model\r", "Model: anthropic/other-model"},
		{"three\r", "Back at Anthropic."},
		{"/model third-model\r", "Model: anthropic/third-model"},
		{"four\r", "A bare name."},
	} {
		u.keys(step.keys)
		u.wait(step.want)
	}
	u.wait("tokens:")
	if n, m := len(anth.Requests()), len(oai.Requests()); n != 3 || m != 1 {
		t.Fatalf("the Anthropic server got %d requests (want 3), the OpenAI one %d (want 1)", n, m)
	}
	creds := func(r testmodel.Request) string {
		return r.Header.Get("X-Api-Key") + " " + r.Header.Get("Authorization")
	}
	for i, r := range anth.Requests() {
		if got := creds(r); !strings.Contains(got, "test-key") || strings.Contains(got, "openai-secret") {
			t.Errorf("Anthropic request %d carried the credentials %q, want test-key only", i+1, got)
		}
	}
	if got := creds(oai.Requests()[0]); !strings.Contains(got, "openai-secret") || strings.Contains(got, "test-key") {
		t.Errorf("the OpenAI request carried the credentials %q, want openai-secret only", got)
	}
	u.exit()
}

// --think on an OpenAI-compatible model: a reasoning effort in the
// request, the reasoning the endpoint streams shown dimmed before the
// reply (and not sent back), /think turning it off.
func TestChatTUI_openai_reasoning(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Reply{Parts: []testmodel.Part{{Thinking: "Weighing the two options first.\nstep 2\nstep 3\nstep 4\nstep 5\nstep 6\nstep 7\nstep 8\nthe last step"},
			{Text: "Option A."}}, Model: "o4-mini"},
		testmodel.Say("Plain now."))
	u := startTUI(t, c, "openai", srv, "--think", "--model", "openai/o4-mini")
	u.keys("choose\r")
	u.wait("Weighing the two options first.")
	u.wait("3 more line(s) (ctrl+o to expand)") // cut like Anthropic's thinking
	u.wait("Option A.")
	if !regexp.MustCompile(`\x1b\[[0-9;]*2[;0-9]*m[^\x1b]*Weighing the two`).MatchString(u.scr.Raw()) {
		t.Errorf("the reasoning is not dimmed:\n%q", u.scr.Raw())
	}
	// Cut on the screen once printed (while it streams, the live area
	// may show it whole), whole in the transcript. The turn's end line
	// can be drawn a frame before the live area is taken down, so wait
	// for the spinner to go too.
	u.waitDisplayIs("the turn's end without its live area", func(d string) bool {
		return strings.Contains(d, "tokens:") && !strings.Contains(d, "Working…")
	})
	if d := u.disp.String(); strings.Contains(d, "the last step") || !strings.Contains(d, "3 more line(s)") {
		t.Fatalf("the long reasoning was not cut:\n%s", d)
	}
	u.wait("tokens:")
	u.keys("\x0f")
	u.waitDisplay("the last step")
	u.keys("\x0f")
	u.waitDisplayGone("every output expanded")
	u.keys("/think\r")
	u.wait("Extended thinking: off")
	u.keys("again\r")
	u.wait("Plain now.")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if reqs[0].Body["reasoning_effort"] != "medium" {
		t.Errorf("the first request's reasoning_effort = %v, want medium", reqs[0].Body["reasoning_effort"])
	}
	if _, on := reqs[1].Body["reasoning_effort"]; on || strings.Contains(string(reqs[1].Raw), "Weighing") {
		t.Errorf("the second request asks for reasoning or sends the reasoning back: %s", reqs[1].Raw)
	}
	u.exit()
}

// /fullscreen turns full-screen mode on mid-session, with the
// conversation so far in its view, and off again: what it showed then
// reaches the scrollback, and the inline screen goes on.
func TestChatTUI_fullscreen_toggle(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t, testmodel.Say("First answer."), testmodel.Say("Second answer."), testmodel.Say("Third answer."))
	u := startTUI(t, c, "anthropic", srv)
	rawWait := func(want string) {
		t.Helper()
		testbin.WaitFor(t, fmt.Sprintf("the output to have %q", want), func() bool { return strings.Contains(u.scr.Raw(), want) })
	}
	u.keys("one\r")
	u.wait("First answer.")
	u.wait("tokens:")
	u.keys("/fullscreen\r")
	rawWait("\x1b[?1049h")
	u.waitDisplay("Full screen: on")
	u.waitDisplay("First answer.") // the conversation so far, in the view
	u.keys("two\r")
	u.waitDisplay("Second answer.")
	u.keys("/fullscreen\r")
	rawWait("\x1b[?1049l")
	u.waitDisplay("Full screen: off")
	u.waitDisplay("Second answer.") // printed into the scrollback
	u.keys("three\r")
	u.waitDisplay("Third answer.")
	if d := u.disp.String(); strings.Index(d, "Second answer.") > strings.Index(d, "Third answer.") {
		t.Errorf("the screen is out of order:\n%s", d)
	}
	u.exit()
}

// Two calls of one tool asked about at once: each question shows its own
// call (the question carries the call's id; the prompt's title and the
// reason name the same file), Esc refuses, and the spinner's clock stands
// still while the user decides.
func TestChatTUI_permission_question_per_call_esc_refuses_clock_paused(t *testing.T) {
	c := newChatRun(t)
	// A short path, so that the prompt's title shows it whole.
	outside, err := os.MkdirTemp("", "o")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	for _, n := range []string{"first.txt", "second.txt"} {
		if err := os.WriteFile(filepath.Join(outside, n), []byte("content of "+n+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(
			testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"` + outside + `/first.txt"}`},
			testmodel.ToolCall{ID: "r2", Name: "Read", Input: `{"file_path":"` + outside + `/second.txt"}`}),
		testmodel.Say("Both answered."))
	u := startTUI(t, c, "openai", srv)
	u.keys("read both\r")
	title := regexp.MustCompile(`Allow Read\(([^)]*)\)\?`)
	reason := regexp.MustCompile(`Read: (\S+)`)
	check := func() {
		t.Helper()
		u.waitDisplay("Choose 1-")
		d := u.disp.String()
		tm, rm := title.FindAllStringSubmatch(d, -1), reason.FindAllStringSubmatch(d, -1)
		if len(tm) == 0 || len(rm) == 0 {
			t.Fatalf("no question on the display:\n%s", d)
		}
		if got, want := tm[len(tm)-1][1], rm[len(rm)-1][1]; got != want {
			t.Fatalf("the question's title names %s but it asks about %s:\n%s", got, want, d)
		}
	}
	check()
	// The clock stands still while the question waits: the spinner's
	// seconds read the same before and after the screen changed again.
	clock := regexp.MustCompile(`Working… \((\d+)s`)
	before := clock.FindStringSubmatch(u.disp.String())
	u.keys("\x1b[B") // the highlight moves: the screen is drawn anew
	u.waitDisplayIs("the second choice highlighted", func(s string) bool { return strings.Contains(s, "❯ 2.") })
	if after := clock.FindStringSubmatch(u.disp.String()); before != nil && (after == nil || after[1] != before[1]) {
		t.Errorf("the spinner's clock ran while the user decided: %v then %v", before, after)
	}
	u.keys("\x1b") // Esc refuses the first
	u.wait("Choose 1-")
	u.waitDisplayGone("❯ 2.")
	check()
	u.keys("1\r") // and allow the second once
	u.wait("Both answered.")
	msgs := decodeRequest(srv.Requests()[1])
	t1, _, _ := msgs.toolResult("r1")
	t2, _, _ := msgs.toolResult("r2")
	refused, allowed := t1, t2
	if strings.Contains(t1, "content of first.txt") {
		refused, allowed = t2, t1
	}
	if !strings.Contains(refused, "The user denied the call") || !strings.Contains(allowed, "content of") {
		t.Errorf("Esc did not refuse one and 1 allow the other:\n%s\n---\n%s", t1, t2)
	}
	u.exit()
}

// An Edit that would fail is refused before anyone is asked: a file never
// read, and an old_string the file does not hold. The one that would
// work is asked about.
func TestChatTUI_failing_edit_refused_before_asking(t *testing.T) {
	c := newChatRun(t)
	for _, n := range []string{"unread.txt", "read.txt"} {
		if err := os.WriteFile(filepath.Join(c.dir, n), []byte("alpha\nbeta\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "e1", Name: "Edit", Input: `{"file_path":"unread.txt","old_string":"beta","new_string":"gamma"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"read.txt"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "e2", Name: "Edit", Input: `{"file_path":"read.txt","old_string":"delta","new_string":"gamma"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "e3", Name: "Edit", Input: `{"file_path":"read.txt","old_string":"beta","new_string":"gamma"}`}),
		testmodel.Say("Edited."))
	u := startTUI(t, c, "openai", srv)
	u.keys("edit them\r")
	u.wait("Allow Edit(")
	u.keys("1\r")
	u.wait("Edited.")
	if n := strings.Count(u.scr.String(), "Allow Edit("); n != 1 {
		t.Errorf("asked %d times, want once (only the edit that works):\n%s", n, u.scr.String())
	}
	reqs := srv.Requests()
	if text, _, _ := decodeRequest(reqs[1]).toolResult("e1"); !strings.Contains(text, "has not been read") {
		t.Errorf("the unread file's edit got %q", text)
	}
	if text, _, _ := decodeRequest(reqs[3]).toolResult("e2"); !strings.Contains(text, "old_string was not found") {
		t.Errorf("the edit that does not match got %q", text)
	}
	if b, _ := os.ReadFile(filepath.Join(c.dir, "read.txt")); string(b) != "alpha\ngamma\n" {
		t.Errorf("read.txt = %q", b)
	}
	u.exit()
}

// The words under a call: an Edit's counts in one sentence, a Read's
// lines counted as the file has them, TodoWrite as a checklist; and a
// turn cut short counts the tokens the provider reported, in the turn's
// line and in /cost.
func TestChatTUI_call_texts_todo_checklist_and_interrupted_tokens(t *testing.T) {
	c := newChatRun(t)
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	todos := `{"todos":[{"content":"Read the notes","status":"completed","activeForm":"Reading"},` +
		`{"content":"Translate the notes","status":"in_progress","activeForm":"Translating"},` +
		`{"content":"Check the result","status":"pending","activeForm":"Checking"}]}`
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "t1", Name: "TodoWrite", Input: todos}),
		testmodel.Call(testmodel.ToolCall{ID: "e1", Name: "Edit", Input: `{"file_path":"notes.txt","old_string":"two","new_string":"deux"}`}),
		testmodel.Say("Done."))
	u := startTUI(t, c, "anthropic", srv, "--allowed-tools", "Edit")
	u.keys("go\r")
	u.wait("Done.")
	all := u.scr.String()
	for _, want := range []string{"(3 lines)", "☒ Read the notes", "☐ Translate the notes", "☐ Check the result",
		"Update Todos", "1 replacement · 1 addition, 1 removal"} {
		if !strings.Contains(all, want) {
			t.Errorf("the screen lacks %q:\n%s", want, all)
		}
	}
	for _, bad := range []string{"(4 lines)", "::", `{"todos"`, "The todo list was updated"} {
		if strings.Contains(all, bad) {
			t.Errorf("the screen shows %q:\n%s", bad, all)
		}
	}
	// A reply cut short after the provider reported its tokens.
	srv.Push(testmodel.Reply{Parts: []testmodel.Part{{Text: "Half a reply"}, {Usage: 55},
		{Wait: func(ctx context.Context) error { <-ctx.Done(); return nil }}}, InputTokens: 1234})
	u.keys("more\r")
	u.waitDisplay("↑ 1234 ↓ 55 tokens")
	u.keys("\x1b")
	u.wait("tokens: 1234 in, 55 out")
	u.keys("/cost\r")
	u.wait("anthropic/test-model: ")
	u.wait("in, ")
	if !regexp.MustCompile(`anthropic/test-model: \d*1234 in, \d*55 out`).MatchString(u.scr.String()) {
		t.Errorf("/cost leaves out the interrupted call:\n%s", u.scr.String())
	}
	u.exit()
}

// The keys: a slash menu that narrows as the command is typed (Tab
// completes), Shift+Tab cycling the permission mode, Ctrl-R searching the
// prompts typed before, a context gauge by the token counts; each told
// in /help.
func TestChatTUI_command_menu_mode_cycle_history_search_context_gauge(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Reply{Parts: []testmodel.Part{{Text: "First answer."}}, InputTokens: 12800, OutputTokens: 20},
		testmodel.Say("Second answer."),
		testmodel.Say("Third answer."))
	u := startTUI(t, c, "anthropic", srv)
	u.keys("/help\r")
	u.wait("typing / lists the commands")
	u.wait("Shift+Tab cycles the permission mode")
	u.wait("Ctrl-R searches the prompts")
	u.wait("how full the model's context window is")

	// The menu narrows as the command is typed.
	// below is what the display shows under the last line holding prompt.
	below := func(s, prompt string) string {
		if i := strings.LastIndex(s, prompt); i >= 0 {
			return s[i+len(prompt):]
		}
		return ""
	}
	u.keys("/c")
	u.waitDisplayIs("the commands starting with c", func(s string) bool {
		m := below(s, "> /c\n")
		return strings.Contains(m, "/clear") && strings.Contains(m, "/compact") && strings.Contains(m, "/cost") && !strings.Contains(m, "/model")
	})
	u.keys("os")
	u.waitDisplayIs("only /cost", func(s string) bool {
		m := below(s, "> /cos\n")
		return strings.Contains(m, "/cost") && !strings.Contains(m, "/compact") && !strings.Contains(m, "/clear")
	})
	u.keys("\t\r") // Tab completes it; Enter runs it
	u.wait("No model calls yet.")
	u.waitDisplayGone("tab completes")

	// Shift+Tab: default → acceptEdits → plan.
	u.keys("\x1b[Z")
	u.waitDisplay("acceptEdits mode")
	u.keys("\x1b[Z")
	u.waitDisplay("plan mode")
	u.keys("/mode\r")
	u.wait("Mode: plan")
	u.keys("\x1b[Z")
	u.waitDisplayGone("plan mode")

	// Two prompts, then Ctrl-R finds the first by a word of it.
	u.keys("tell me about alpha\r")
	u.wait("First answer.")
	u.wait("tokens: 12800 in, 20 out")
	u.wait("% of the context")
	if !regexp.MustCompile(`tokens: 12800 in, 20 out .*· [1-9]\d?% of the context`).MatchString(u.scr.String()) {
		t.Errorf("the turn's token line has no context gauge:\n%s", u.scr.String())
	}
	u.keys("and now beta\r")
	u.wait("Second answer.")
	u.keys("\x12alp")
	u.waitDisplay("(reverse-i-search)`alp': tell me about alpha")
	u.keys("\r") // into the editor
	u.waitDisplayGone("reverse-i-search")
	u.keys("\r") // and sent
	u.wait("Third answer.")
	if got := decodeRequest(srv.Requests()[2]).msgs; len(got) < 5 || !strings.Contains(textOf(got[4]["content"]), "tell me about alpha") {
		t.Errorf("the prompt found by Ctrl-R was not sent: %v", got)
	}
	u.exit()
}

// "Don't ask again" grants exactly what it names: the file, or, as a
// choice of its own, its directory.
func TestChatTUI_dont_ask_again_grants_what_it_names(t *testing.T) {
	c := newChatRun(t)
	outside, err := os.MkdirTemp("", "o")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	write := func(id, name, content string) testmodel.Reply {
		return testmodel.Call(testmodel.ToolCall{ID: id, Name: "Write",
			Input: fmt.Sprintf(`{"file_path":%q,"content":%q}`, filepath.Join(outside, name), content)})
	}
	srv := testmodel.NewServer(t,
		write("w1", "a.txt", "1"), write("w2", "a.txt", "2"), write("w3", "b.txt", "3"), write("w4", "c.txt", "4"),
		testmodel.Say("Written."))
	u := startTUI(t, c, "openai", srv)
	u.keys("write them\r")
	u.wait("Allow Write(")
	u.waitDisplay("for Edit(/" + outside + "/a.txt)")
	u.waitDisplay("for Edit(/" + outside + "/**)")
	u.keys("2\r") // this file
	u.wait("Allow Write(" + outside + "/b.txt)")
	u.keys("3\r") // the directory
	u.wait("Written.")
	if n := strings.Count(u.scr.String(), "Allow Write("); n != 2 {
		t.Errorf("asked %d times, want twice (a.txt, then b.txt):\n%s", n, u.scr.String())
	}
	for name, want := range map[string]string{"a.txt": "2", "b.txt": "3", "c.txt": "4"} {
		if b, _ := os.ReadFile(filepath.Join(outside, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
	u.exit()
}

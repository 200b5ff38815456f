package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// screen collects what the program writes to the pseudo-terminal.
type screen struct {
	out testbin.Output
}

func (s *screen) Write(p []byte) (int, error) { return s.out.Write(p) }

// String is what was written with the terminal's escape sequences (colours,
// cursor moves) taken out: the text a reader sees, as far as a test needs.
func (s *screen) String() string {
	return backspaced.ReplaceAllString(escapes.ReplaceAllString(s.Raw(), ""), "")
}

// backspaced matches a character the cursor moved back over (to draw the
// next one there).
var backspaced = regexp.MustCompile(`.\x08`)

// Raw is what was written, escape sequences and all.
func (s *screen) Raw() string { return s.out.String() }

// escapes matches CSI, OSC and two-byte escape sequences.
var escapes = regexp.MustCompile(`\x1b(?:\[[0-9;?<>=$ ]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78MDEHc])`)

// waitScreen waits until the screen, after offset from, contains want, and
// returns the offset just past it.
func waitScreen(t *testing.T, s *screen, from int, want string) int {
	t.Helper()
	at := -1
	err := testbin.Poll(t, func() bool {
		text := s.String()
		if i := strings.Index(text[min(from, len(text)):], want); i >= 0 {
			at = from + i + len(want)
		}
		return at >= 0
	})
	if err != nil {
		t.Fatalf("the screen never showed %q after offset %d (%v):\n%s", want, from, err, s.String())
	}
	return at
}

// processesWith lists the pids whose command line contains marker.
func processesWith(t *testing.T, marker string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		if strings.Contains(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), marker) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// TestChatInteractive_ctrl_c_under_pty runs the real binary's chat on a
// pseudo-terminal: a Bash call runs a long sleep, the first Ctrl-C cancels
// the turn and ends the sleep's process group, the second exits with 130.
func TestChatInteractive_ctrl_c_under_pty(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to find the command's processes")
	}
	c := newChatRun(t)
	// A duration no other process has on its command line: bash runs the
	// single command by exec, so it is sleep's own argument.
	marker := fmt.Sprintf("60.%09d", time.Now().UnixNano()%1e9)
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"sleep ` + marker + `","description":"Wait a minute"}`}))
	env, args := modelFlags("anthropic", srv)
	cmd := exec.Command(binary, append([]string{"chat", "--allowed-tools", "Bash"}, args...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), append(env, "TERM=xterm")...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		for _, pid := range processesWith(t, marker) {
			t.Errorf("process %s (sleep %s) outlived the test", pid, marker)
		}
	})
	var scr screen
	go func() { _, _ = io.Copy(&scr, ptmx) }()

	at := waitScreen(t, &scr, 0, "Type /help for commands.")
	// The terminal UI has started once it turned bracketed paste on; its
	// first frame ("> ") may come before the banner printed above it, so
	// the prompt is not waited for after the banner. Keys typed from now
	// on wait in the editor.
	if err := testbin.Poll(t, func() bool { return strings.Contains(scr.Raw(), "\x1b[?2004h") }); err != nil {
		t.Fatalf("the terminal UI never started (%v):\n%q", err, scr.Raw())
	}
	if _, err := io.WriteString(ptmx, "wait a minute\r"); err != nil {
		t.Fatal(err)
	}
	at = waitScreen(t, &scr, at, "Bash(sleep "+marker+")")
	if err := testbin.Poll(t, func() bool { return len(processesWith(t, marker)) > 0 }); err != nil {
		t.Fatalf("sleep %s never started (%v):\n%s", marker, err, scr.String())
	}

	// First Ctrl-C: the terminal sends SIGINT; the turn is cancelled and
	// the prompt comes back only after the call has ended its processes.
	if _, err := ptmx.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	at = waitScreen(t, &scr, at, "Interrupted: cancelling the turn")
	at = waitScreen(t, &scr, at, "the command was stopped and its processes ended")
	waitScreen(t, &scr, at, "> ")
	if pids := processesWith(t, marker); len(pids) > 0 {
		t.Errorf("sleep %s still runs (pids %v) after the turn was cancelled", marker, pids)
	}
	select {
	case err := <-exited:
		t.Fatalf("chat exited after the first Ctrl-C (%v):\n%s", err, scr.String())
	default:
	}

	// Second Ctrl-C, at the prompt (raw mode: a key, not a signal): exit 130.
	if _, err := ptmx.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Errorf("chat ended with %v, want exit code %d:\n%s", err, exitInterrupted, scr.String())
		}
	case <-testbin.WaitDone(t):
		t.Fatalf("chat did not exit after the second Ctrl-C:\n%s", scr.String())
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (the cancelled turn makes no more)", n)
	}
}

// TestChatInteractive_sigterm_at_the_prompt: SIGTERM ends a chat waiting
// at its prompt (the read gives up) with exit code 143.
func TestChatInteractive_sigterm_at_the_prompt(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t)
	env, args := modelFlags("anthropic", srv)
	cmd := exec.Command(binary, append([]string{"chat"}, args...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), env...)
	stdin, err := cmd.StdinPipe() // kept open: the prompt waits
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var scr screen
	cmd.Stdout, cmd.Stderr = &scr, &scr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	waitScreen(t, &scr, 0, "> ")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitTerminated {
			t.Errorf("chat ended with %v, want exit code %d:\n%s", err, exitTerminated, scr.String())
		}
	case <-testbin.WaitDone(t):
		t.Fatalf("chat did not exit on SIGTERM at the prompt:\n%s", scr.String())
	}
}

// TestChatInteractive_question_on_a_terminal answers AskUserQuestion's
// form at a real terminal (line editing in raw mode), then presses Ctrl-C
// at a second form, which dismisses it and cancels the turn.
func TestChatInteractive_question_on_a_terminal(t *testing.T) {
	c := newChatRun(t)
	ask := func(id string) testmodel.Reply {
		return testmodel.Call(testmodel.ToolCall{ID: id, Name: "AskUserQuestion", Input: `{"questions":[
			{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"relational"},{"label":"SQLite","description":"embedded"}]},
			{"question":"Which extras?","header":"Extras","multiSelect":true,"options":[{"label":"Cache","description":""},{"label":"Queue","description":""},{"label":"Search","description":""}]}]}`})
	}
	srv := testmodel.NewServer(t, ask("ask1"), testmodel.Say("Noted the answers."), ask("ask2"))
	env, args := modelFlags("anthropic", srv)
	cmd := exec.Command(binary, append([]string{"chat"}, args...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), append(env, "TERM=xterm")...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	var scr screen
	go func() { _, _ = io.Copy(&scr, ptmx) }()
	typeLine := func(s string) {
		t.Helper()
		if _, err := io.WriteString(ptmx, s+"\r"); err != nil {
			t.Fatal(err)
		}
	}

	at := waitScreen(t, &scr, 0, "> ")
	typeLine("choose the storage")
	at = waitScreen(t, &scr, at, "2. SQLite — embedded")
	// The prompts are waited for without their trailing space: the
	// renderer writes a blank cell only where the screen showed something
	// else before.
	at = waitScreen(t, &scr, at, "Choose 1-2 or type an answer (Enter to skip):")
	typeLine("2")
	at = waitScreen(t, &scr, at, "Choose any of 1-3, separated by commas, or type an answer (Enter to skip):")
	typeLine("1,3")
	at = waitScreen(t, &scr, at, "Noted the answers.")
	at = waitScreen(t, &scr, at, "> ")
	typeLine("ask me again")
	at = waitScreen(t, &scr, at, "Choose 1-2 or type an answer (Enter to skip):")
	if _, err := ptmx.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	at = waitScreen(t, &scr, at, "Interrupted: cancelling the turn")
	waitScreen(t, &scr, at, "> ")
	typeLine("/exit")
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("chat ended with %v, want exit code 0:\n%s", err, scr.String())
		}
	case <-testbin.WaitDone(t):
		t.Fatalf("chat did not exit on /exit:\n%s", scr.String())
	}
	// The key cancels the turn before the form returns: the dismissal is
	// never sent to the model.
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3:\n%s", len(reqs), scr.String())
	}
	text, isErr, ok := decodeRequest(reqs[1]).toolResult("ask1")
	if want := `"Which database?"="SQLite", "Which extras?"="Cache, Search"`; !ok || isErr || !strings.Contains(text, want) {
		t.Errorf("ask1 result (found %v, error %v) = %q, want %q", ok, isErr, text, want)
	}
}

// TestChatInteractive_sigint_at_a_plain_prompt: with piped stdin, Ctrl-C
// arrives as SIGINT at the prompt. One gives a hint and keeps the prompt's
// pending read (the next line typed is not lost); a line in between
// starts over; two in a row exit with 130.
func TestChatInteractive_sigint_at_a_plain_prompt(t *testing.T) {
	c := newChatRun(t)
	srv := testmodel.NewServer(t)
	env, args := modelFlags("anthropic", srv)
	cmd := exec.Command(binary, append([]string{"chat"}, args...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var scr screen
	cmd.Stdout, cmd.Stderr = &scr, &scr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	const hint = "(Ctrl-C again to exit, or type /exit.)"
	at := waitScreen(t, &scr, 0, "> ")
	_ = cmd.Process.Signal(syscall.SIGINT)
	at = waitScreen(t, &scr, at, hint)
	if _, err := io.WriteString(stdin, "/mode\n"); err != nil {
		t.Fatal(err)
	}
	at = waitScreen(t, &scr, at, "Mode: default")
	at = waitScreen(t, &scr, at, "> ")
	_ = cmd.Process.Signal(syscall.SIGINT)
	at = waitScreen(t, &scr, at, hint)
	waitScreen(t, &scr, at, "> ")
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Errorf("chat ended with %v, want exit code %d:\n%s", err, exitInterrupted, scr.String())
		}
	case <-testbin.WaitDone(t):
		t.Fatalf("chat did not exit after two SIGINTs:\n%s", scr.String())
	}
}

// The exit codes chat documents in its --help (a shell's 128+signal).
const (
	exitMaxTurns    = 3   // the turn limit was reached
	exitInterrupted = 130 // SIGINT
	exitTerminated  = 143 // SIGTERM
)

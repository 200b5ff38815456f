//go:build unix

package e2e

import (
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// startTUITyped starts a chat in a pseudo-terminal of cols×rows into
// which keys were typed before the program started (so in the terminal's
// line mode), and returns at once.
func startTUITyped(t *testing.T, c *chatRun, cols, rows int, srv *testmodel.Server, keys string, extra ...string) *tui {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	u := &tui{t: t, c: c, ptmx: ptmx, scr: &screen{}, disp: newDisplay(t, cols, rows), exited: make(chan error, 1)}
	go func() { _, _ = io.Copy(io.MultiWriter(u.scr, u.disp), ptmx) }()
	u.keys(keys)
	// The echo says the terminal has taken them.
	u.waitRaw("the terminal's echo of the keys", strings.TrimRight(keys, "\r"))
	env, args := modelFlags("anthropic", srv)
	cmd := exec.Command(binary, append(append([]string{"chat"}, args...), extra...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), append(env, "TERM=xterm-256color")...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	go func() { u.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-u.exited
		}
		ptmx.Close()
	})
	return u
}

// A prompt typed as the chat starts, before its terminal UI has taken the
// terminal, is sent whole and alone. Until then the terminal is in line
// mode, where Enter reaches the program as a newline (ICRNL): read as
// such by the editor, it was a line break in the prompt, so the prompt
// was not sent (two "> " lines on screen) and went out later glued to the
// next one.
func TestChatDay_prompt_typed_before_the_ui_starts_is_sent(t *testing.T) {
	for _, mode := range screenModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			srv := testmodel.NewServer(t, testmodel.Say("First heard."), testmodel.Say("Second heard."))
			// Typed before the program starts: the terminal, in line
			// mode, takes the keys (and echoes them) before the program
			// can take it.
			u := startTUITyped(t, c, mode.cols, mode.rows, srv, "first words\r", mode.extra...)
			// Read in the scrollback too: the inline screen may have
			// scrolled the reply up by the time it is looked at.
			u.waitAll("First heard.")
			u.keys("second words\r")
			u.waitAll("Second heard.")
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			for i, want := range []string{"first words", "second words"} {
				if got := lastPrompt(reqs[i]); got != want {
					t.Errorf("prompt %d sent as %q, want %q", i+1, got, want)
				}
			}
			if strings.Contains(strings.Join(u.disp.all(), "\n"), "\n>\n>") {
				t.Errorf("empty prompt lines on screen:\n%s", strings.Join(u.disp.all(), "\n"))
			}
			u.exit()
		})
	}
}

// waitAll waits until the scrollback or the screen shows want.
func (u *tui) waitAll(want string) {
	u.t.Helper()
	u.waitDisplayIs(want+" in the scrollback or on screen", func(string) bool {
		return strings.Contains(strings.Join(u.disp.all(), "\n"), want)
	})
}

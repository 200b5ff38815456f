package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// What the user can read after a turn, on the screen and in the
// terminal's scrollback, read through a terminal emulator: every line of
// a reply exactly once, in order, and no spinner line left behind.

// startTUISized is startTUI on a terminal of cols×rows.
func startTUISized(t *testing.T, c *chatRun, cols, rows int, srv *testmodel.Server, extra ...string) *tui {
	t.Helper()
	cmd, ptmx := startChatPTY(t, c, cols, rows, srv, extra)
	return attachTUI(t, c, cmd, ptmx, cols, rows, extra)
}

// startChatPTY starts `chat` against the scripted model srv in a
// pseudo-terminal of cols×rows.
func startChatPTY(t *testing.T, c *chatRun, cols, rows int, srv *testmodel.Server, extra []string) (*exec.Cmd, *os.File) {
	t.Helper()
	env, args := modelFlags("anthropic", srv)
	cmd := exec.Command(binary, append(append([]string{"chat"}, args...), extra...)...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), append(env, "TERM=xterm-256color")...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	if err != nil {
		t.Fatal(err)
	}
	return cmd, ptmx
}

// resize changes the terminal's size: the emulator's and the pseudo-
// terminal's (the program gets SIGWINCH).
func (u *tui) resize(cols, rows int) {
	u.t.Helper()
	u.disp.mu.Lock()
	u.disp.emu.Resize(cols, rows)
	u.disp.mu.Unlock()
	if err := pty.Setsize(u.ptmx, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		u.t.Fatal(err)
	}
}

// all is the scrollback and then the screen, line by line, trailing
// blanks trimmed.
func (d *display) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	if sb := d.emu.Scrollback(); sb != nil {
		for _, l := range sb.Lines() {
			out = append(out, strings.TrimRight(l.String(), " "))
		}
	}
	for _, l := range strings.Split(d.emu.String(), "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

// tallReply is a reply of list items, a table and a code block, each line
// holding a marker (M001, ...) that must appear once; markers lists them
// in order.
func tallReply(items int) (text string, markers []string) {
	var b strings.Builder
	mark := func() string {
		m := fmt.Sprintf("M%03d", len(markers)+1)
		markers = append(markers, m)
		return m
	}
	fmt.Fprintf(&b, "Here is the answer, %s.\n\n", mark())
	for range items {
		fmt.Fprintf(&b, "- item %s of the list\n", mark())
	}
	b.WriteString("\n| Name | Marker | Note |\n|------|--------|------|\n")
	for i := range 8 {
		fmt.Fprintf(&b, "| row%d | %s | cell |\n", i, mark())
	}
	b.WriteString("\n```go\n")
	for range 12 {
		fmt.Fprintf(&b, "x := %q // code\n", mark())
	}
	b.WriteString("```\n\n")
	fmt.Fprintf(&b, "That is all, %s.\n", mark())
	return b.String(), markers
}

// streamed splits text into parts of a few lines each, each sent once
// the display shows the last marker of the one before (as a user's
// terminal keeps up with a model): the reply is drawn while it streams.
func streamed(d *display, text string) []testmodel.Part {
	lines := strings.SplitAfter(text, "\n")
	var parts []testmodel.Part
	for len(lines) > 0 {
		n := min(3, len(lines))
		chunk := strings.Join(lines[:n], "")
		parts = append(parts, testmodel.Part{Text: chunk})
		if ms := markerRE.FindAllString(chunk, -1); len(ms) > 0 && d != nil {
			parts = append(parts, testmodel.Part{Wait: onAll(d, ms[len(ms)-1])})
		}
		lines = lines[n:]
	}
	return parts
}

// onAll is a scripted wait that holds the model's stream until the
// scrollback or the screen shows want.
func onAll(d *display, want string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for !strings.Contains(strings.Join(d.all(), "\n"), want) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("the display never showed %s:\n%s", want, strings.Join(d.all(), "\n"))
			case <-time.After(10 * time.Millisecond):
			}
		}
		return nil
	}
}

var markerRE = regexp.MustCompile(`M\d{3}`)

// checkOnce checks that the lines hold each marker exactly once, in
// order, and no spinner line.
func checkOnce(t *testing.T, lines []string, markers []string) {
	t.Helper()
	var seen []string
	for _, l := range lines {
		seen = append(seen, markerRE.FindAllString(l, -1)...)
		if strings.Contains(l, "Working…") || strings.Contains(l, "esc to interrupt") {
			t.Errorf("a spinner line was left behind: %q", l)
		}
	}
	if !slices.Equal(seen, markers) {
		t.Errorf("the reply's lines, in scrollback and on screen, are\n%v\nwant each once in order\n%v\nscreen and scrollback:\n%s",
			seen, markers, strings.Join(lines, "\n"))
	} else if t.Failed() {
		t.Logf("screen and scrollback:\n%s", strings.Join(lines, "\n"))
	}
}

func TestChatScreen_tall_reply_table_and_code_every_line_once(t *testing.T) {
	sizes := []struct{ cols, rows int }{{80, 24}, {120, 40}}
	for _, mode := range []string{"inline", "fullscreen"} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", mode, sz.cols, sz.rows), func(t *testing.T) {
				t.Parallel()
				c := newChatRun(t)
				text, markers := tallReply(2 * sz.rows)
				srv := testmodel.NewServer(t)
				var extra []string
				if mode == "fullscreen" {
					extra = []string{"--fullscreen"}
				}
				u := startTUISized(t, c, sz.cols, sz.rows, srv, extra...)
				parts := streamed(u.disp, text)
				if mode == "fullscreen" {
					// Full-screen mode shows the end of the conversation:
					// the stream waits for nothing.
					parts = streamed(nil, text)
				}
				srv.Push(testmodel.Reply{Parts: parts})
				u.keys("answer at length\r")
				u.wait("tokens:")
				if mode == "fullscreen" {
					// Leaving full-screen mode prints what it showed into
					// the scrollback.
					u.waitDisplay(markers[len(markers)-1])
					u.keys("/fullscreen\r")
				}
				first, last := markers[0], markers[len(markers)-1]
				u.waitDisplayIs("the reply from start to end, and the prompt", func(s string) bool {
					all := strings.Join(u.disp.all(), "\n")
					return strings.Contains(all, first) && strings.Contains(all, last) && !strings.Contains(s, "Working…")
				})
				checkOnce(t, u.disp.all(), markers)
				u.exit()
			})
		}
	}
}

// A resize while the reply streams loses no line either.
func TestChatScreen_resize_mid_reply(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	text, markers := tallReply(30)
	srv := testmodel.NewServer(t)
	u := startTUISized(t, c, 120, 40, srv)
	parts := streamed(u.disp, text)
	half := len(parts) / 2
	halfMark := markerRE.FindAllString(parts[half-1].Text+parts[half-2].Text, -1)
	resized := make(chan struct{})
	wait := testmodel.Part{Wait: func(ctx context.Context) error {
		select {
		case <-resized:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	srv.Push(testmodel.Reply{Parts: append(append(append([]testmodel.Part{}, parts[:half]...), wait), parts[half:]...)})
	u.keys("answer at length\r")
	_ = onAll(u.disp, halfMark[len(halfMark)-1])(context.Background())
	u.resize(80, 24)
	close(resized)
	u.wait("tokens:")
	last := markers[len(markers)-1]
	u.waitDisplayIs("the end of the reply", func(s string) bool {
		return strings.Contains(strings.Join(u.disp.all(), "\n"), last) && !strings.Contains(s, "Working…")
	})
	checkOnce(t, u.disp.all(), markers)
	u.exit()
}

// A command that printed 3000 lines (over 100 KB, so its result was saved
// for being over budget) shows its output's head and tail and its count.
func TestChatScreen_bash_with_3000_lines_shows_its_output(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	cmd := `for i in $(seq 1 3000); do echo "output line $i of the long command, padded to about thirty-four bytes"; done`
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: fmt.Sprintf(`{"command":%q}`, cmd)}),
		testmodel.Say("Printed."))
	u := startTUISized(t, c, 120, 40, srv, "--allowed-tools", "Bash")
	u.keys("print a lot\r")
	u.wait("Printed.")
	u.waitDisplayIs("the output's count", func(string) bool {
		return strings.Contains(strings.Join(u.disp.all(), "\n"), "3000 line(s) of output")
	})
	all := strings.Join(u.disp.all(), "\n")
	for _, want := range []string{"output line 1 of", "output line 3000 of"} {
		if !strings.Contains(all, want) {
			t.Errorf("the screen lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "(no output)") {
		t.Errorf("the output is shown as none:\n%s", all)
	}
	u.exit()
}

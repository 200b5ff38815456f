package e2e

import (
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// The chat screen through a day's work, read through a terminal emulator
// with its scrollback at the sizes people use, inline and full-screen:
// nothing typed is lost, and the user reads the user's text.

// screenModes are the modes and sizes the screen tests run in.
var screenModes = []struct {
	name       string
	cols, rows int
	extra      []string
}{
	{"inline_120x40", 120, 40, nil},
	{"inline_80x24", 80, 24, nil},
	{"fullscreen_120x40", 120, 40, []string{"--fullscreen"}},
	{"fullscreen_80x24", 80, 24, []string{"--fullscreen"}},
}

// lastPrompt is the text of the last user message of a model request.
func lastPrompt(r testmodel.Request) string {
	s := decodeRequest(r)
	return textOf(s.msgs[len(s.msgs)-1]["content"])
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
			u := startTUIBare(t, c, mode.cols, mode.rows, srv, mode.extra...)
			u.keys("first words\r")
			// The terminal echoed the line (line mode: the program had
			// not taken the terminal) before the program drew anything:
			// the keys came in the window this test is about.
			u.waitRaw("the terminal's echo of the typed line", "first words")
			if raw := u.scr.Raw(); strings.Index(raw, "first words") > max(0, strings.IndexByte(raw, 0x1b)) && strings.IndexByte(raw, 0x1b) >= 0 {
				t.Fatalf("the program drew before the keys were typed: the window was missed:\n%q", raw)
			}
			u.waitDisplay("First heard.")
			u.keys("second words\r")
			u.waitDisplay("Second heard.")
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

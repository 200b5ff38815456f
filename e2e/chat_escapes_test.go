package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// TestChatScreen_command_output_cannot_drive_the_terminal: a command's
// output reaches the user's terminal through chat, so a sandboxed command
// that cannot open the terminal (terminal-tiocsti) could still write to
// it: OSC 52 sets the clipboard the user pastes into their shell next, a
// title or a hyperlink hides where it leads, a cursor move or a clear
// redraws the screen to show a permission question that is not there, a
// carriage return rewrites the line. What chat shows of a result keeps
// none of them (colours aside), and neither does the command line shown,
// nor the model's own reply (a prompt-injected model could print them).
func TestChatScreen_command_output_cannot_drive_the_terminal(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	cmd := `printf 'one\033]52;c;ZWNobyBwd25lZA==\007two\033]0;SPOOFTITLE\007three\033[2J\033[Hfour\033]8;;http://evil.example/\033\\link\033]8;;\033\\five\rSIX\233Kseven\n'; printf '#\033]52;c;Q01E\007'`
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: fmt.Sprintf(`{"command":%q}`, cmd)}),
		testmodel.Say("Printed.\x1b]52;c;ZWNobyBtb2RlbA==\x07 Done\x1b[2J."))
	u := startTUISized(t, c, 120, 40, srv, "--allowed-tools", "Bash")
	u.keys("print it\r")
	u.wait("Done.")
	raw := u.scr.Raw()
	for _, bad := range []string{"\x1b]52;", "ZWNobyBtb2RlbA", "\x1b]0;SPOOFTITLE", "\x1b]8;;http://evil", "\x1b[2J", "\rSIX", "\u009bK"} {
		if strings.Contains(raw, bad) {
			t.Errorf("chat passed %q from a command's output or line to the terminal", bad)
		}
	}
	if !strings.Contains(raw, "seven") {
		t.Errorf("the output's text is not shown:\n%q", raw)
	}
	u.exit()
}

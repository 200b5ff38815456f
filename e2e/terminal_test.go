//go:build !windows

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// TestServe_drops_its_terminal_so_commands_need_no_session: serve started
// from a shell on a terminal (a member of the shell's session, not its
// leader) gives the terminal up at start. An unconfined command (sandbox
// off) then cannot open it, and needs no session of its own for that: it
// stays in the server's session (a new session is a new scheduler
// autogroup, a cost on a loaded machine). A background task still gets
// a terminal of its own.
func TestServe_drops_its_terminal_so_commands_need_no_session(t *testing.T) {
	t.Parallel()
	for _, u := range sandboxenv.Users(t) {
		t.Run(u.Name, func(t *testing.T) {
			t.Parallel()
			e := sandboxenv.New(t, binary, u)
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal: %v", err)
			}
			t.Cleanup(func() { ptmx.Close(); tty.Close() })
			// The shell leads the terminal's session; serve is its child.
			argv := append([]string{"/bin/sh", "-c", `"$@"; exit $?`, "sh"}, e.User.Wrap...)
			argv = append(argv, e.Bin, "serve", "--cwd", e.Work, "--state-dir", e.State, "--sandbox", "off",
				"--permission-mode", "bypassPermissions", "--settings", sandboxenv.AllowEverythingHook)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = e.Environ(t)
			cmd.ExtraFiles = []*os.File{tty}
			cmd.SysProcAttr = sandboxenv.TerminalAttr(3)
			cs := testbin.Stdio(t, cmd, nil)

			out, _ := testbin.Bash(t, cs, `(exec 4</dev/tty) 2>/dev/null && echo TTY-OPENED; `+
				`echo "SESSIONS $(awk '{print $6}' /proc/$$/stat) $(awk '{print $6}' /proc/$PPID/stat)"`, false)
			if strings.Contains(out, "TTY-OPENED") {
				t.Errorf("an unconfined command opened the server's terminal: %s", out)
			}
			f := strings.Fields(out[strings.Index(out, "SESSIONS"):])
			if len(f) < 3 || f[1] != f[2] {
				t.Errorf("the command got a session of its own, or the server's is unknown (command, server): %s", out)
			}
			// Nor can it type into the terminal through a descriptor of the
			// server's (/proc/PID/fd): TIOCSTI needs the caller's own
			// controlling terminal, or CAP_SYS_ADMIN where the kernel still
			// allows that (dev.tty.legacy_tiocsti=1), which only root's
			// unconfined command holds: the gap docs/sandbox.md and sandbox
			// check name.
			out, _ = testbin.Bash(t, cs, `for p in /proc/$PPID/fd/*; do python3 -c "
import fcntl, os, sys, termios
try:
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
except OSError:
    sys.exit()
if os.isatty(fd):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b' ')
        print('TYPED-THROUGH', sys.argv[1])
    except OSError as e:
        print('refused', sys.argv[1], e)
" "$p"; done; echo RAN`, false)
			legacy, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
			gap := u.Name == "root" && strings.TrimSpace(string(legacy)) != "0"
			if !strings.Contains(out, "RAN") || strings.Contains(out, "TYPED-THROUGH") && !gap {
				t.Errorf("an unconfined command typed into the server's terminal through its descriptor (legacy_tiocsti %q): %s", legacy, out)
			}
			out, _ = testbin.Bash(t, cs, `(exec 4</dev/tty) && echo BG-TTY-OK; tty`, true)
			id := strings.TrimSuffix(strings.Fields(strings.TrimPrefix(out, "Command running in the background as task "))[0], ".")
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "TaskOutput",
				Arguments: map[string]any{"task_id": id, "block": true, "timeout": 30000}})
			if err != nil {
				t.Fatal(err)
			}
			bg := testbin.Text(t, res)
			if !strings.Contains(bg, "BG-TTY-OK") || strings.Contains(bg, tty.Name()+"\n") {
				t.Errorf("the background task's terminal is not its own (the server's is %s): %s", tty.Name(), bg)
			}
		})
	}
}

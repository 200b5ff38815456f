//go:build !windows

package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/agent-mcp/agent-mcp/sandbox/proc"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// hasTerminals is true: a background task runs on a pseudo-terminal.
const hasTerminals = true

// detach keeps the command off the server's controlling terminal
// (TIOCSTI on it would type a line into the user's shell). A confined
// command's init gives the terminal up itself, and a server without one
// has none to pass on (serve drops its own at start: DropTerminal), so
// those commands lead a process group of their own; an unconfined
// command of a server that keeps its terminal (chat) leads a session of
// its own. A session is not free: each is a new scheduler autogroup,
// which a loaded machine makes cost some milliseconds a command. Either
// way the group id is the started process's pid.
func detach(attr *syscall.SysProcAttr, confined bool) {
	if confined || !hasControllingTerminal() {
		proc.OwnGroup(attr)
	} else {
		attr.Setsid = true
	}
}

// hasControllingTerminal reports whether this process has a controlling
// terminal: /dev/tty opens unless it has none (ENXIO). Any other failure
// counts as having one, so that a command is never left on it.
func hasControllingTerminal() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return !errors.Is(err, unix.ENXIO)
	}
	unix.Close(fd)
	return true
}

// DropTerminal gives up this process's controlling terminal, if it has
// one and does not lead its session (a session leader's TIOCNOTTY hangs
// up its foreground process group): `serve` calls it once at start, so
// that no command or language server it starts inherits the terminal and
// an unconfined command needs no session of its own (detach). What is
// already open on the terminal still reads and writes it, and Ctrl-C
// still reaches the server's process group. It reports whether the
// process is now without a controlling terminal.
func DropTerminal() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, unix.ENXIO)
	}
	defer unix.Close(fd)
	if sid, err := unix.Getsid(0); err != nil || sid == unix.Getpid() {
		return false
	}
	return unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0) == nil
}

// openTerminal opens a pseudo-terminal for cmd and makes it cmd's stdin,
// returning its master and slave ends. An unconfined shell takes it as
// its controlling terminal here (Ctrl-C then interrupts it); a confined
// one gets it from the sandbox's init, which starts the shell's session.
func openTerminal(cmd *exec.Cmd, confined bool) (master, slave *os.File, err error) {
	master, slave, err = pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("opening a pseudo-terminal: %w", err)
	}
	_ = pty.Setsize(master, &pty.Winsize{Rows: 50, Cols: 200})
	rawOutput(slave)
	cmd.Stdin = slave
	if !confined {
		// A session of its own, whose controlling terminal is this one
		// (a session leader cannot also set its process group).
		cmd.SysProcAttr.Setpgid = false
		controllingTerminal(cmd.SysProcAttr)
	}
	return master, slave, nil
}

// bashPath finds bash once.
var bashPath = sync.OnceValue(func() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/bash"
})

// findBash returns the bash that runs commands.
func findBash() (string, error) { return bashPath(), nil }

//go:build !windows

package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/creack/pty"
)

// hasTerminals is true: a background task runs on a pseudo-terminal.
const hasTerminals = true

// groupIDLasts is true: a process group id names the group while any
// member lives, so without /proc it can be trusted.
const groupIDLasts = true

// detach keeps the command off the server's controlling terminal: an
// unconfined command leads a session of its own, a confined one (whose
// init gives the terminal up itself) a process group of its own. Either
// way the group id is the started process's pid.
func detach(attr *syscall.SysProcAttr, confined bool) {
	if confined {
		attr.Setpgid = true
	} else {
		attr.Setsid = true
	}
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
		controllingTerminal(cmd.SysProcAttr)
	}
	return master, slave, nil
}

// signalGroup sends sig to process group pgid. A stopped process cannot
// act on SIGTERM, so SIGTERM is followed by SIGCONT.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if sig == syscall.SIGTERM {
		_ = syscall.Kill(-pgid, syscall.SIGCONT)
	}
	return err
}

// groupExists reports whether process group pgid has a member.
func groupExists(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// groupGone reports whether no process is left in process group pgid.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
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

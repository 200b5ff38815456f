//go:build !windows

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// GroupIDLasts is true on Unix: a process group id names the group while
// any member lives, so without /proc it can be trusted.
const GroupIDLasts = true

// OwnGroup makes the process started with attr lead a process group of its
// own, whose id is then its pid.
func OwnGroup(attr *syscall.SysProcAttr) { attr.Setpgid = true }

// Signal sends sig to process group pgid. A stopped process cannot act on
// SIGTERM, so SIGTERM is followed by SIGCONT.
func Signal(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if sig == syscall.SIGTERM {
		_ = syscall.Kill(-pgid, syscall.SIGCONT)
	}
	return err
}

// Exists reports whether process group pgid has a member.
func Exists(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// Gone reports whether no process is left in process group pgid.
func Gone(pgid int) bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }

// StartInGroup sets cmd up to start in a process group of its own and makes
// its context's cancellation kill the whole group, so that what the
// process started dies with it.
func StartInGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	OwnGroup(cmd.SysProcAttr)
	cmd.Cancel = func() error { return Signal(cmd.Process.Pid, syscall.SIGKILL) }
}

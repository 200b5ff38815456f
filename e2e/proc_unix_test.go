//go:build !windows

package e2e

import "syscall"

// terminalAttr starts a process leading a new session whose controlling
// terminal is its descriptor fd.
func terminalAttr(fd int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: fd}
}

// killProcess sends SIGKILL to pid.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

//go:build !windows

package sandboxenv

import "syscall"

// TerminalAttr starts a process leading a new session whose controlling
// terminal is its descriptor fd.
func TerminalAttr(fd int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: fd}
}

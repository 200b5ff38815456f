//go:build !windows

package upstream

import (
	"os/exec"
	"syscall"
)

// ownGroup gives a stdio server a process group of its own: Ctrl-C at
// chat's terminal signals the foreground group, and must cancel the
// turn, not kill the server.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

//go:build !windows

package hooks

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the hook in a process group of its own and makes
// cancellation kill the whole group, so a hook's children die with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

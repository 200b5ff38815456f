package hooks

import (
	"os/exec"
	"strconv"
	"syscall"
)

// ownGroup starts the hook in a new process group (so Ctrl-C at the
// console does not reach it) and makes cancellation end the hook's
// whole process tree with taskkill /T /F, falling back to killing the
// hook's own process when taskkill cannot run.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	cmd.Cancel = func() error {
		if err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid)).Run(); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}

package upstream

import (
	"os/exec"
	"syscall"
)

// ownGroup starts a stdio server in a new process group: Ctrl-C at
// chat's console is then not delivered to it, and cancels the turn
// without killing the server.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

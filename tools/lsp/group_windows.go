package lsp

import (
	"os/exec"
	"strconv"
	"syscall"
)

// ownGroup starts a language server in a new process group, so Ctrl-C at
// the console does not reach it.
func ownGroup(attr *syscall.SysProcAttr) {
	attr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// signalGroup ends the process tree of the server with pid pgid with
// taskkill /T /F: Windows has no signals to send, so SIGTERM and SIGKILL
// both end the tree at once.
func signalGroup(pgid int, _ syscall.Signal) error {
	return exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pgid)).Run()
}

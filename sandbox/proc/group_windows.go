package proc

import (
	"errors"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"
)

// GroupIDLasts is false on Windows: a "group" is its first process's pid,
// which may name another process once that one has exited.
const GroupIDLasts = false

// OwnGroup starts the process in a new process group, so Ctrl-C at the
// console does not reach it.
func OwnGroup(attr *syscall.SysProcAttr) {
	attr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// Signal ends the process tree under pid pgid with taskkill /T /F: Windows
// has no signals to send, so every signal ends the tree at once.
// Processes whose parent has already exited are no longer found under it.
func Signal(pgid int, _ syscall.Signal) error {
	if !Exists(pgid) {
		return errors.New("no such process")
	}
	return exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pgid)).Run()
}

// Exists reports whether the process with pid pgid is still running.
func Exists(pgid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pgid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == uint32(windows.STATUS_PENDING) // STILL_ACTIVE
}

// Gone reports whether the process with pid pgid has exited.
func Gone(pgid int) bool { return !Exists(pgid) }

// StartInGroup sets cmd up to start in a new process group and makes its
// context's cancellation end its whole process tree, falling back to the
// process itself when taskkill cannot run.
func StartInGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	OwnGroup(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		if err := Signal(cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}

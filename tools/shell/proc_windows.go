package shell

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"
)

// hasTerminals is false: Windows has no pseudo-terminal that a bash.exe
// reads like a Unix terminal, so a background task runs with pipes and
// TaskInput has nothing to type into.
const hasTerminals = false

// groupIDLasts is false: a task's "group" on Windows is its shell's pid,
// which may name another process once the shell has exited.
const groupIDLasts = false

// detach starts the command in a new process group, so Ctrl-C at the
// server's console does not reach it. The group id used for the task is
// the shell's pid.
func detach(attr *syscall.SysProcAttr, _ bool) {
	attr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// DropTerminal does nothing on Windows, where a console is not a
// controlling terminal a command could type into; it reports true.
func DropTerminal() bool { return true }

// errNoTerminal is why a Windows task has no terminal.
var errNoTerminal = errors.New("no pseudo-terminal for a background task on Windows: it runs with pipes")

// openTerminal fails on Windows (hasTerminals is false, so it is not
// called): see errNoTerminal.
func openTerminal(*exec.Cmd, bool) (master, slave *os.File, err error) {
	return nil, nil, errNoTerminal
}

// signalGroup ends the process tree of the shell with pid pgid with
// taskkill /T /F: Windows has no signals to send, so SIGTERM and SIGKILL
// both end the tree at once. Processes whose shell has already exited
// are no longer found under it.
func signalGroup(pgid int, _ syscall.Signal) error {
	if !groupExists(pgid) {
		return errors.New("no such process")
	}
	return exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pgid)).Run()
}

// groupExists reports whether the process with pid pgid is still running.
func groupExists(pgid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pgid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == uint32(windows.STATUS_PENDING) // STILL_ACTIVE
}

// groupGone reports whether the task's shell (pid pgid) has exited.
func groupGone(pgid int) bool { return !groupExists(pgid) }

// findBash finds bash.exe once (see lookupWindowsBash).
var findBash = sync.OnceValues(func() (string, error) {
	return lookupWindowsBash(bashLookup{
		getenv:   os.Getenv,
		lookPath: exec.LookPath,
		exists: func(p string) bool {
			st, err := os.Stat(p)
			return err == nil && !st.IsDir()
		},
	})
})

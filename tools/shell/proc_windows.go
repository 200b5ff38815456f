package shell

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/agent-mcp/agent-mcp/sandbox/proc"
)

// hasTerminals is false: Windows has no pseudo-terminal that a bash.exe
// reads like a Unix terminal, so a background task runs with pipes and
// TaskInput has nothing to type into.
const hasTerminals = false

// detach starts the command in a new process group, so Ctrl-C at the
// server's console does not reach it. The group id used for the task is
// the shell's pid.
func detach(attr *syscall.SysProcAttr, _ bool) { proc.OwnGroup(attr) }

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

package e2e

import (
	"os"
	"syscall"
)

// terminalAttr is nil on Windows, which has no controlling terminals:
// the sandbox tests that set one skip there (no sandbox outside Linux).
func terminalAttr(int) *syscall.SysProcAttr { return nil }

// killProcess ends the process pid.
func killProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

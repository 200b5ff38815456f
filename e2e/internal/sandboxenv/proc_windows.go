package sandboxenv

import "syscall"

// TerminalAttr is nil on Windows, which has no controlling terminals:
// the sandbox tests that set one skip there (no sandbox outside Linux).
func TerminalAttr(int) *syscall.SysProcAttr { return nil }

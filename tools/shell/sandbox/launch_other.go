//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// Main runs the hidden launcher; there is none outside Linux.
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, "agent-mcp sandbox launcher: only on Linux")
	return 2
}

// Probe reports what this machine offers: nothing outside Linux.
func Probe(launcher string) Support {
	err := errors.New("the sandbox needs Linux")
	return Support{LandlockErr: err, NamespacesErr: err}
}

// initCommand is never used outside Linux: no layer is ever available.
func initCommand(launcher, arg string, _ plan) *exec.Cmd {
	return exec.Command(launcher, HiddenCommand, "init", arg)
}

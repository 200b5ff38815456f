//go:build !linux

package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

var errNotLinux = errors.New("the sandbox needs Linux")

// Main runs the hidden launcher; there is none outside Linux.
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, "agent-mcp sandbox launcher: only on Linux")
	return 2
}

// LandlockABI reports that there is no Landlock outside Linux.
func LandlockABI() (int, error) { return 0, errNotLinux }

// ProbeNamespaces reports that there are no namespaces outside Linux.
func ProbeNamespaces(launcher string) error { return errNotLinux }

// Command is never used outside Linux: no layer is ever available.
func Command(launcher, arg string, _ Plan) *exec.Cmd {
	return exec.Command(launcher, HiddenCommand, "init", arg)
}

// ProbeCgroup reports that there are no cgroups outside Linux.
func ProbeCgroup(launcher string) (string, error) { return "", errNotLinux }

// NewCgroup reports that there are no cgroups outside Linux.
func NewCgroup(parent string, n uint64) (string, error) { return "", errNotLinux }

// RemoveCgroup has nothing to remove outside Linux.
func RemoveCgroup(dir string) error { return nil }

// RemoveStaleCgroups has nothing to remove outside Linux.
func RemoveStaleCgroups(parent string) int { return 0 }

// SupervisorSupport reports that there is no seccomp outside Linux.
func SupervisorSupport() error { return errNotLinux }

//go:build !windows

package server

import (
	"errors"
	"syscall"
)

func processGone(pid int) bool {
	// A killed child that its parent has reaped no longer exists.
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

//go:build !windows

package e2e

import "syscall"

// killProcess sends SIGKILL to pid.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

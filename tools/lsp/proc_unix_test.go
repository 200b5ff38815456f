//go:build !windows

package lsp_test

import "syscall"

// killProcess sends SIGKILL to pid.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// processAlive reports whether a process with pid exists.
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

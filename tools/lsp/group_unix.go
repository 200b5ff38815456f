//go:build !windows

package lsp

import "syscall"

// ownGroup starts a language server in a process group of its own.
func ownGroup(attr *syscall.SysProcAttr) { attr.Setpgid = true }

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

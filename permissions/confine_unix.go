//go:build unix

package permissions

import "syscall"

var syscallENOTDIR error = syscall.ENOTDIR

//go:build unix

package confine

import "syscall"

var syscallENOTDIR error = syscall.ENOTDIR

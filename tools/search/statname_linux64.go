//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64 || ppc64le || s390x || mips64 || mips64le)

package search

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// statName is fstatat(d, name, st, AT_SYMLINK_NOFOLLOW) with the name
// made a C string in a buffer the directory reuses: unix.Fstatat
// allocates one for every call, and Glob stats every file it matches.
func (d *rawDir) statName(name string, st *unix.Stat_t) error {
	d.cname = append(append(d.cname[:0], name...), 0)
	_, _, errno := syscall.Syscall6(unix.SYS_NEWFSTATAT, uintptr(d.fd), uintptr(unsafe.Pointer(&d.cname[0])),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

//go:build linux && !(amd64 || arm64 || riscv64 || loong64 || ppc64 || ppc64le || s390x || mips64 || mips64le)

package search

import "golang.org/x/sys/unix"

// statName is fstatat(d, name, st, AT_SYMLINK_NOFOLLOW) (fstatat64 on
// 32-bit systems, which unix.Fstatat picks).
func (d *rawDir) statName(name string, st *unix.Stat_t) error {
	return unix.Fstatat(d.fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
}

//go:build unix && !linux

package confine

import "golang.org/x/sys/unix"

// dirSearchFlag opens a directory to look names up in it.
const dirSearchFlag = unix.O_RDONLY

// openBeneathFast has no single-call form here: done is always false.
func openBeneathFast(dirfd int, rel string, flag int) (fd int, err error, done bool) {
	return -1, nil, false
}

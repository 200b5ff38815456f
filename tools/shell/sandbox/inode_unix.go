//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// inode is fi's inode number.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// openRegular opens path for reading without following a link in its
// last component and without blocking on a FIFO put in its place; the
// caller checks that what it opened is a regular file.
func openRegular(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

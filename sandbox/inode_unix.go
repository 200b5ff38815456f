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

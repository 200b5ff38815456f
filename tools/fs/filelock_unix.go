//go:build unix

package fs

import (
	"errors"
	"os"
	"syscall"
)

// tryLockFile takes the advisory exclusive lock (flock(2)) on f without
// waiting, reporting whether it got it. Every agent-mcp process takes this
// lock on a file before reading it for a write and holds it until the
// write has been renamed into place, so writers in different processes
// take turns; so does any other program that flocks the file.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EINVAL):
			// The file system has no locks (some network and FUSE
			// file systems): the write goes on unlocked, still
			// checked before the rename.
			return true, nil
		default:
			return false, err
		}
	}
}

// linksOf is how many names (hard links) the file of info has.
func linksOf(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

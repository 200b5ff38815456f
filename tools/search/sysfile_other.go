//go:build !linux && !windows

package search

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// Everything below the walk's root is opened relative to the root's
// descriptor following no symbolic link in any component
// (confine.OpenBeneath), so a directory or file swapped for a link
// during the walk is not entered or read.

// openFileAt opens the file rel below the directory open as rootfd,
// following no symbolic link; abs names it in errors.
func openFileAt(rootfd int, rel, abs string) (*rawFile, error) {
	fd, err := confine.OpenBeneath(rootfd, rel, syscall.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	return &rawFile{f: os.NewFile(uintptr(fd), abs)}, nil
}

// openDirAt opens the directory rel ("" for the root itself) below the
// directory open as rootfd, following no symbolic link; abs names it.
func openDirAt(rootfd int, rel, abs string) (*rawDir, error) {
	if rel == "" {
		rel = "."
	}
	fd, err := confine.OpenBeneath(rootfd, rel, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	f := os.NewFile(uintptr(fd), abs)
	return &rawDir{f: f, entries: beneathDir{f}}, nil
}

// beneathDir reaches a directory's entries through its descriptor: fstatat
// and openat, following no link.
type beneathDir struct{ dir *os.File }

func (b beneathDir) modTime(name string) fileTime {
	var st unix.Stat_t
	if unix.Fstatat(int(b.dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return unknownTime
	}
	return fileTime{sec: int64(st.Mtim.Sec), nsec: int32(st.Mtim.Nsec)}
}

func (b beneathDir) readFile(name string) ([]byte, error) {
	fd, err := confine.OpenBeneath(int(b.dir.Fd()), name, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), b.dir.Name()+"/"+name)
	defer f.Close()
	return io.ReadAll(f)
}

// Close closes nothing: the descriptor is the directory's own.
func (beneathDir) Close() error { return nil }

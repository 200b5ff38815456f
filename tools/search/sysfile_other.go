//go:build !linux && !windows

package search

import (
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// Everything below the walk's root is opened relative to the root's
// descriptor following no symbolic link in any component
// (confine.OpenBeneath), so a directory or file swapped for a link
// during the walk is not entered or read.

// rawFile is an open file; outside Linux it is an *os.File.
type rawFile struct{ f *os.File }

// openFile opens the file at path, following links (a path the caller
// named itself).
func openFile(path string) (*rawFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &rawFile{f: f}, nil
}

// openFileAt opens the file rel below the directory open as rootfd,
// following no symbolic link; abs names it in errors.
func openFileAt(rootfd int, rel, abs string) (*rawFile, error) {
	fd, err := confine.OpenBeneath(rootfd, rel, syscall.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	return &rawFile{f: os.NewFile(uintptr(fd), abs)}, nil
}

// rawFromOS reads f, which it then owns.
func rawFromOS(f *os.File) *rawFile { return &rawFile{f: f} }

func (f *rawFile) Read(p []byte) (int, error) { return f.f.Read(p) }
func (f *rawFile) Close() error               { return f.f.Close() }

// ModTime returns the file's modification time.
func (f *rawFile) ModTime() (time.Time, error) {
	info, err := f.f.Stat()
	if err != nil {
		return time.Time{}, err
	}
	return info.ModTime(), nil
}

// rawDir is an open directory of a walk.
type rawDir struct{ f *os.File }

// rootFD returns the descriptor of the walk's root directory.
func rootFD(f *os.File) int { return int(f.Fd()) }

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
	return &rawDir{f: os.NewFile(uintptr(fd), abs)}, nil
}

func (d *rawDir) Close() error { return d.f.Close() }

// list returns the directory's entries, sorted by name when sorted, appended to
// out[:0].
func (d *rawDir) list(out []dirEntry, sorted bool) ([]dirEntry, error) {
	entries, err := d.f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out = out[:0]
	for _, e := range entries {
		k := kindOther
		switch t := e.Type(); {
		case t.IsDir():
			k = kindDir
		case t.IsRegular():
			k = kindFile
		}
		out = append(out, dirEntry{name: e.Name(), kind: k})
	}
	if sorted {
		slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	}
	return out, nil
}

// modTime returns the modification time of the entry name in the
// directory (unknownTime where it cannot be read).
func (d *rawDir) modTime(name string) fileTime {
	var st unix.Stat_t
	if unix.Fstatat(int(d.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return unknownTime
	}
	return fileTime{sec: int64(st.Mtim.Sec), nsec: int32(st.Mtim.Nsec)}
}

// readFile reads the file name in the directory, following no symbolic
// link.
func (d *rawDir) readFile(name string) ([]byte, error) {
	fd, err := confine.OpenBeneath(int(d.f.Fd()), name, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.f.Name()+"/"+name)
	defer f.Close()
	return io.ReadAll(f)
}

package search

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Windows has no openat: below the walk's root, files and directories
// are opened through an os.Root at the root's final path (read back from
// its handle), so a link is followed only where it stays below the root.

// rootAt opens an os.Root at the directory open as the handle fd.
func rootAt(fd int) (*os.Root, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(fd), &buf[0], uint32(len(buf)), 0)
	if err != nil {
		return nil, fmt.Errorf("reading the walk root's path: %w", err)
	}
	return os.OpenRoot(windows.UTF16ToString(buf[:n]))
}

// openFileAt opens the file rel below the directory open as rootfd; abs
// names it in errors.
func openFileAt(rootfd int, rel, abs string) (*rawFile, error) {
	root, err := rootAt(rootfd)
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	return &rawFile{f: f}, nil
}

// openDirAt opens the directory rel ("" for the root itself) below the
// directory open as rootfd, with an os.Root at it through which its
// entries are reached; abs names it.
func openDirAt(rootfd int, rel, abs string) (*rawDir, error) {
	top, err := rootAt(rootfd)
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	dir := top
	if rel != "" {
		dir, err = top.OpenRoot(filepath.FromSlash(rel))
		top.Close()
		if err != nil {
			return nil, &pathError{Op: "open", Path: abs, Err: err}
		}
	}
	f, err := dir.Open(".")
	if err != nil {
		dir.Close()
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	return &rawDir{f: f, entries: rootDir{dir}}, nil
}

// rootDir reaches a directory's entries through an os.Root at it.
type rootDir struct{ root *os.Root }

func (r rootDir) modTime(name string) fileTime {
	info, err := r.root.Lstat(name)
	if err != nil {
		return unknownTime
	}
	t := info.ModTime()
	return fileTime{sec: t.Unix(), nsec: int32(t.Nanosecond())}
}

func (r rootDir) readFile(name string) ([]byte, error) {
	f, err := r.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (r rootDir) Close() error { return r.root.Close() }

package search

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/windows"
)

// Windows has no openat: below the walk's root, files and directories
// are opened through an os.Root at the root's final path (read back from
// its handle), so a link is followed only where it stays below the root.

// rawFile is an open file; on Windows it is an *os.File.
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

// rawDir is an open directory of a walk, with an os.Root at it through
// which its entries are read.
type rawDir struct {
	f    *os.File
	root *os.Root
}

// rootFD returns the handle of the walk's root directory.
func rootFD(f *os.File) int { return int(f.Fd()) }

// openDirAt opens the directory rel ("" for the root itself) below the
// directory open as rootfd; abs names it.
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
	return &rawDir{f: f, root: dir}, nil
}

func (d *rawDir) Close() error {
	err := d.f.Close()
	if rerr := d.root.Close(); err == nil {
		err = rerr
	}
	return err
}

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
// directory, not following a link (unknownTime where it cannot be read).
func (d *rawDir) modTime(name string) fileTime {
	info, err := d.root.Lstat(name)
	if err != nil {
		return unknownTime
	}
	t := info.ModTime()
	return fileTime{sec: t.Unix(), nsec: int32(t.Nanosecond())}
}

// readFile reads the file name in the directory.
func (d *rawDir) readFile(name string) ([]byte, error) {
	f, err := d.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

//go:build !linux

package search

import (
	"os"
	"slices"
	"strings"
	"time"
)

// Outside Linux files and directories are read through *os.File; what
// differs between Windows and the other systems is how an entry below an
// open directory is stated and opened without following a link out of
// the walk (entryAccess: an os.Root on Windows, the directory's descriptor
// and openat elsewhere).

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

// rootFD returns the descriptor (on Windows the handle) of the walk's
// root directory.
func rootFD(f *os.File) int { return int(f.Fd()) }

// entryAccess reaches the entries of an open directory the way the system
// allows without following a link out of the walk.
type entryAccess interface {
	// modTime returns the modification time of the entry name, not
	// following a link (unknownTime where it cannot be read).
	modTime(name string) fileTime
	// readFile reads the file name.
	readFile(name string) ([]byte, error)
	// Close releases what the access holds besides the directory.
	Close() error
}

// rawDir is an open directory of a walk: f lists it, entries reaches what
// is in it.
type rawDir struct {
	f       *os.File
	entries entryAccess
}

func (d *rawDir) Close() error {
	err := d.f.Close()
	if cerr := d.entries.Close(); err == nil {
		err = cerr
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
func (d *rawDir) modTime(name string) fileTime { return d.entries.modTime(name) }

// readFile reads the file name in the directory, following no link out
// of the walk.
func (d *rawDir) readFile(name string) ([]byte, error) { return d.entries.readFile(name) }

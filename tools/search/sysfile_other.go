//go:build !linux

package search

import (
	"os"
	"time"
)

// rawFile is an open file; outside Linux it is an *os.File.
type rawFile struct{ f *os.File }

func openFile(path string) (*rawFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &rawFile{f: f}, nil
}

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

// readDir lists dir sorted by name.
func readDir(dir string) ([]dirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, 0, len(entries))
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
	return out, nil
}

// modTimes returns the modification times of names in dir (zero where
// one cannot be read).
func modTimes(dir string, names []string) []time.Time {
	out := make([]time.Time, len(names))
	for i, name := range names {
		if info, err := os.Lstat(dir + string(os.PathSeparator) + name); err == nil {
			out[i] = info.ModTime()
		}
	}
	return out
}

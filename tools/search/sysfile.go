package search

import (
	"io"
	"os"
)

// dirEntry is one name in a directory listing.
type dirEntry struct {
	name string
	kind entryKind
}

type entryKind uint8

const (
	kindOther entryKind = iota // symbolic links, devices, sockets, pipes
	kindFile
	kindDir
)

// lstatKind finds an entry's kind when the listing did not say.
func lstatKind(path string) entryKind {
	info, err := os.Lstat(path)
	switch {
	case err != nil:
		return kindOther
	case info.IsDir():
		return kindDir
	case info.Mode().IsRegular():
		return kindFile
	}
	return kindOther
}

var errEOF = io.EOF

// pathError is an *os.PathError without importing its construction
// everywhere.
type pathError = os.PathError

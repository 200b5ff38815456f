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

var errEOF = io.EOF

// pathError is an *os.PathError without importing its construction
// everywhere.
type pathError = os.PathError

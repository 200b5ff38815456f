package search

import (
	"math"
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

// pathError is an *os.PathError without importing its construction
// everywhere.
type pathError = os.PathError

// fileTime is a modification time as the file system gives it, compared
// as two integers: the sort key of Glob's results, cheaper to keep and
// compare than a time.Time. unknownTime, for a time that could not be
// read, sorts before any other.
type fileTime struct {
	sec  int64
	nsec int32
}

var unknownTime = fileTime{sec: math.MinInt64}

func (t fileTime) compare(u fileTime) int {
	switch {
	case t.sec < u.sec:
		return -1
	case t.sec > u.sec:
		return 1
	case t.nsec < u.nsec:
		return -1
	case t.nsec > u.nsec:
		return 1
	}
	return 0
}

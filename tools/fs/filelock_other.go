//go:build !unix

package fs

import "os"

// tryLockFile takes no lock where flock(2) does not exist; writes are
// still checked against the file's content before the rename.
func tryLockFile(*os.File) (bool, error) { return true, nil }

// linksOf reports one name where hard links are not counted.
func linksOf(os.FileInfo) uint64 { return 1 }

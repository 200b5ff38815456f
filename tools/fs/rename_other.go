//go:build !linux

package fs

import "os"

// renameNoReplace is not available here: the caller checks that the name
// is free and renames.
func renameNoReplace(*os.File, string, string) (bool, error) { return false, nil }

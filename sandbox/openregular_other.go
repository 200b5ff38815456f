//go:build !linux

package sandbox

import "os"

// openRegular opens path for reading; the caller checks that it is a
// regular file (there is no sandbox here, so no command planted it).
func openRegular(path string) (*os.File, error) { return os.Open(path) }

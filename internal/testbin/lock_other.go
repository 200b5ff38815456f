//go:build !unix

package testbin

// lockDir has no file lock to take here: [Build] then links the binary
// straight to its output, as every test process did before the shared one.
func lockDir(dir string) (unlock func(), err error) {
	return nil, errNoLock
}

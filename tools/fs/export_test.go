package fs

// SetBeforeCommit makes f run right before each write's first change to
// the disk, with the resolved path being written, until the test ends.
func SetBeforeCommit(f func(real string)) (restore func()) {
	beforeCommit = f
	return func() { beforeCommit = nil }
}

package fs

// SetBeforeReadOpen makes f run in Read and LS right before the path is
// opened, with its absolute path, until restore is called.
func SetBeforeReadOpen(f func(abs string)) (restore func()) {
	beforeReadOpen = f
	return func() { beforeReadOpen = nil }
}

// SetBeforeListDir makes f run in LS right before each directory is
// opened, with its path relative to the listed directory, until restore
// is called.
func SetBeforeListDir(f func(rel string)) (restore func()) {
	beforeListDir = f
	return func() { beforeListDir = nil }
}

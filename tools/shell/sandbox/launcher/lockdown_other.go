//go:build !linux

package launcher

// Undumpable does nothing outside Linux.
func Undumpable() error { return nil }

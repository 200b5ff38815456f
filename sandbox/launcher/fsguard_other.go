//go:build !linux

package launcher

// FileGuardSupport reports that there is no seccomp outside Linux.
func FileGuardSupport() error { return errNotLinux }

//go:build !amd64 && !arm64

package launcher

// privArchSyscalls: the privilege filter is built for amd64 and arm64
// only; elsewhere set-user-ID bits are held by the dropped capabilities
// alone (a command's own files can still get them).
func privArchSyscalls() []privSyscalls { return nil }

//go:build !amd64 && !arm64

package launcher

// archSyscalls: the socket filter is built for amd64 and arm64 only;
// elsewhere, with the network off and Landlock alone, sockets other than
// TCP are not held.
func archSyscalls() []syscallSet { return nil }

package sandbox

import (
	"bufio"
	"os"
	"slices"
	"strings"
)

// With the network off or proxied, the namespaces layer leaves a command
// only a private loopback (and the egress proxy); but a pathname unix socket is reached through the
// file system, not the network namespace, and one outside the working
// directories can be a door out (a docker.sock is root on the host). The
// server lists the pathname sockets bound in its own network namespace
// (/proc/net/unix) when each command starts and masks those outside the
// writable roots like Read-denied files: connecting to one then fails
// with "Connection refused". Landlock alone cannot refuse them (its
// scoping covers abstract unix sockets only).

// socketLimit bounds the sockets masked per command.
const socketLimit = 500

// unixSockets lists the bound pathname unix sockets of this network
// namespace that lie outside writable and exist as sockets.
func unixSockets(writable []string) []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && len(out) < socketLimit {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		p := fields[7]
		if !strings.HasPrefix(p, "/") || within(p, writable) || slices.Contains(out, p) {
			continue
		}
		if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSocket != 0 {
			out = append(out, p)
		}
	}
	return out
}

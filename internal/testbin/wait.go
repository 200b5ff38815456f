package testbin

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadlineMargin is how long before the test binary's deadline (go test
// -timeout) a wait gives up, so that the test fails naming what it waited
// for rather than the binary panicking with every goroutine's stack.
const deadlineMargin = 5 * time.Second

// errDeadline is the cause of a WaitContext that reached the margin
// before the test binary's deadline.
var errDeadline = errors.New("the test binary's deadline (go test -timeout) is near")

// WaitContext is t's context (ended when the test ends), ended also
// deadlineMargin before the test binary's deadline where there is one: a
// wait bounded by it waits as long as a loaded machine needs, and no
// longer than the run allows.
func WaitContext(t testing.TB) (context.Context, context.CancelFunc) {
	ctx := t.Context()
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			return context.WithDeadlineCause(ctx, d.Add(-deadlineMargin), errDeadline)
		}
	}
	return context.WithCancel(ctx)
}

// WaitDone is closed when a wait gives up (WaitContext ends: the test
// ended or the test binary's deadline is near), for a select that waits
// on a channel beside it.
func WaitDone(t testing.TB) <-chan struct{} {
	ctx, cancel := WaitContext(t)
	t.Cleanup(cancel)
	return ctx.Done()
}

// WaitFor calls cond until it reports true, pausing between calls (1 ms,
// doubling to 50 ms), and fails t naming what if WaitContext ends first.
// cond reads state (a file, a process table, a server's answer); the wait
// ends as soon as that state is there, however long the machine takes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if err := Poll(t, cond); err != nil {
		t.Fatalf("gave up waiting for %s: %v", what, err)
	}
}

// Poll is WaitFor for a caller that fails t itself, with what it saw (a
// screen, a process list): it calls cond as WaitFor does and returns nil
// once cond reports true, or why it gave up when WaitContext ended first.
func Poll(t testing.TB, cond func() bool) error {
	ctx, cancel := WaitContext(t)
	defer cancel()
	pause := time.Millisecond
	for !cond() {
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return context.Cause(ctx)
		case <-timer.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
	return nil
}

// FreeAddr returns a loopback TCP address ("127.0.0.1:PORT") that nothing
// listened on when it returned: for a server the test starts with a port
// of its choosing. The port is drawn from below the kernel's ephemeral
// range (ip_local_port_range), which the kernel never hands out itself:
// a port it chose for a listener on port 0 or for a connection's local end
// in another package's test, running beside this one, was taken between
// FreeAddr's check and the server's listen. Only another FreeAddr's draw
// can still take it, one chance in thousands.
func FreeAddr(t testing.TB) string {
	t.Helper()
	lo, hi := freePortRange()
	var last error
	for range 64 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo)))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			last = err
			continue
		}
		l.Close()
		return addr
	}
	t.Fatalf("no free loopback port in [%d, %d): %v", lo, hi, last)
	return ""
}

// freePortRange is the range FreeAddr draws from: the 10,000 ports below
// the ephemeral range's start where Linux says it (else below 49152, where
// the IANA ephemeral range starts, used by Windows and macOS).
func freePortRange() (lo, hi int) {
	hi = 49152
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 1024+1000 {
				hi = n
			}
		}
	}
	return max(1024, hi-10000), hi
}

// FreePort is the port of FreeAddr.
func FreePort(t testing.TB) int {
	t.Helper()
	_, port, err := net.SplitHostPort(FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := net.LookupPort("tcp", port)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

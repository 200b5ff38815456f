package testbin

import (
	"context"
	"errors"
	"net"
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

// WaitFor calls cond until it reports true, pausing between calls (1 ms,
// doubling to 50 ms), and fails t naming what if WaitContext ends first.
// cond reads state (a file, a process table, a server's answer); the wait
// ends as soon as that state is there, however long the machine takes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := WaitContext(t)
	defer cancel()
	pause := time.Millisecond
	for !cond() {
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			t.Fatalf("gave up waiting for %s: %v", what, context.Cause(ctx))
		case <-timer.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// FreeAddr returns a loopback TCP address ("127.0.0.1:PORT") that nothing
// listened on when it returned: for a server the test starts with a port
// of its choosing (another process may still take it before the server
// does, which the kernel makes unlikely by handing ports out in turn).
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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

package testbin

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitFor_returns_once_the_state_is_there: cond is asked until it
// holds, then WaitFor returns at once.
func TestWaitFor_returns_once_the_state_is_there(t *testing.T) {
	t.Parallel()
	var state atomic.Bool
	var calls atomic.Int32
	go func() {
		for calls.Load() < 3 {
			runtime.Gosched()
		}
		state.Store(true)
	}()
	WaitFor(t, "the state", func() bool { calls.Add(1); return state.Load() })
	if !state.Load() {
		t.Fatal("WaitFor returned before cond held")
	}
	n := calls.Load()
	WaitFor(t, "the state again", func() bool { calls.Add(1); return state.Load() })
	if got := calls.Load() - n; got != 1 {
		t.Fatalf("with the state there, cond was called %d times, want once", got)
	}
}

// failingTB records a fatal failure instead of failing the real test, and
// has the context and deadline a test chooses.
type failingTB struct {
	testing.TB
	ctx      context.Context
	deadline time.Time
	failure  string
}

func (f *failingTB) Context() context.Context { return f.ctx }

func (f *failingTB) Deadline() (time.Time, bool) { return f.deadline, !f.deadline.IsZero() }

func (f *failingTB) Fatalf(format string, args ...any) {
	f.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls WaitFor on f with a cond that never holds, in a goroutine of
// its own (Fatalf ends it), and returns the failure.
func (f *failingTB) run(what string) string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		WaitFor(f, what, func() bool { return false })
	}()
	<-done
	return f.failure
}

// TestWaitFor_gives_up_when_the_test_ends_or_its_deadline_nears: a wait
// ends with a failure naming what it waited for when the test's context
// ends, or near the test binary's deadline.
func TestWaitFor_gives_up_when_the_test_ends_or_its_deadline_nears(t *testing.T) {
	t.Parallel()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	f := &failingTB{TB: t, ctx: ended}
	if got := f.run("the ended test's state"); !strings.Contains(got, "gave up waiting for the ended test's state") {
		t.Errorf("after the test's context ended: failure %q", got)
	}
	// A deadline already within the margin: the wait gives up at once.
	f = &failingTB{TB: t, ctx: context.Background(), deadline: time.Now().Add(deadlineMargin / 2)}
	if got := f.run("the late state"); !strings.Contains(got, "the late state") || !strings.Contains(got, "deadline") {
		t.Errorf("near the deadline: failure %q, want it to name the state and the deadline", got)
	}
}

// TestPoll_reports_why_it_gave_up: Poll returns nil once cond holds and,
// without failing the test, the cause when the wait ends first, so the
// caller can fail with what it saw.
func TestPoll_reports_why_it_gave_up(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	if err := Poll(t, func() bool { return n.Add(1) >= 3 }); err != nil || n.Load() != 3 {
		t.Fatalf("Poll = %v after %d calls, want nil after 3", err, n.Load())
	}
	f := &failingTB{TB: t, ctx: context.Background(), deadline: time.Now().Add(deadlineMargin / 2)}
	err := Poll(f, func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("near the deadline: Poll = %v, want the deadline named", err)
	}
	if f.failure != "" {
		t.Fatalf("Poll failed the test itself: %q", f.failure)
	}
}

// TestWaitDone_closes_near_the_deadline: the channel stays open while
// the test has time, and closes once its binary's deadline is near.
func TestWaitDone_closes_near_the_deadline(t *testing.T) {
	t.Parallel()
	select {
	case <-WaitDone(t):
		t.Fatal("WaitDone closed while the test had time")
	default:
	}
	f := &failingTB{TB: t, ctx: context.Background(), deadline: time.Now().Add(deadlineMargin / 2)}
	select {
	case <-WaitDone(f):
	case <-WaitDone(t):
		t.Fatal("WaitDone stayed open past the margin before the deadline")
	}
}

// TestFreeAddr_can_be_listened_on: the address is a loopback one a
// listener can take, and FreePort is a port number. A port is free when
// FreeAddr returns, not for ever: another process may take it before this
// test listens, so a draw is tried again, and only three taken draws in a
// row fail the test.
func TestFreeAddr_can_be_listened_on(t *testing.T) {
	t.Parallel()
	var errs []string
	for range 3 {
		addr := FreeAddr(t)
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Fatalf("FreeAddr = %q, want a 127.0.0.1 address", addr)
		}
		l, err := net.Listen("tcp", addr)
		if err == nil {
			l.Close()
			errs = nil
			break
		}
		errs = append(errs, fmt.Sprintf("listening on %s: %v", addr, err))
	}
	if len(errs) > 0 {
		t.Fatalf("three addresses of FreeAddr could not be listened on:\n%s", strings.Join(errs, "\n"))
	}
	if p := FreePort(t); p <= 0 || p > 65535 {
		t.Fatalf("FreePort = %d", p)
	}
}

// TestFreeAddr_is_outside_the_kernels_ephemeral_range: the kernel never
// hands FreeAddr's port to a listener on port 0 or to a connection's local
// end, so no test running beside this one takes it before the server does.
func TestFreeAddr_is_outside_the_kernels_ephemeral_range(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Skip("no ip_local_port_range here")
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil {
		t.Fatalf("ip_local_port_range %q: %v", b, err)
	}
	for range 20 {
		if p := FreePort(t); p >= lo && p <= hi {
			t.Fatalf("FreePort = %d, inside the ephemeral range [%d, %d]", p, lo, hi)
		}
	}
}

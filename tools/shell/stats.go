package shell

import "sync/atomic"

// Stats counts the commands one Bash tool (one server) starts, for the
// server's metrics. The zero value is ready; it is safe for concurrent
// use.
type Stats struct {
	confined, unconfined atomic.Uint64
	setupFailures        atomic.Uint64
	background           atomic.Int64
}

// Started returns how many commands were started inside the kernel
// sandbox and outside it (sandbox off, no layer, or an excluded command).
func (s *Stats) Started() (confined, unconfined uint64) {
	return s.confined.Load(), s.unconfined.Load()
}

// SetupFailures returns how many confined commands never ran because the
// sandbox could not be set up around them.
func (s *Stats) SetupFailures() uint64 { return s.setupFailures.Load() }

// Background returns how many background tasks are running.
func (s *Stats) Background() int64 { return s.background.Load() }

// started counts a command started, confined or not; s may be nil.
func (s *Stats) started(confined bool) {
	switch {
	case s == nil:
	case confined:
		s.confined.Add(1)
	default:
		s.unconfined.Add(1)
	}
}

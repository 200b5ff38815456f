package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTracker counts tools/call requests per session (for the cap), keeps
// their cancel functions (for client disconnects and shutdown) and counts
// POSTs in flight (so a drain knows when every response went out).
type callTracker struct {
	maxPerSession int
	resumeWindow  time.Duration

	mu         sync.Mutex
	perSession map[string]int
	calls      map[*trackedCall]struct{}
	orphans    map[string]*orphan // by POST tag
	resuming   map[string]int     // resumed streams open, by session
	posts      int
	draining   bool
	idle       chan struct{} // closed and replaced whenever calls and posts reach zero
}

type trackedCall struct {
	session, tag string
	cancel       context.CancelFunc
}

// orphan is the set of calls whose POST stream the client dropped.
type orphan struct {
	session string
	timer   *time.Timer
}

func newCallTracker(maxPerSession int, resumeWindow time.Duration) *callTracker {
	return &callTracker{
		maxPerSession: maxPerSession,
		resumeWindow:  resumeWindow,
		perSession:    map[string]int{},
		calls:         map[*trackedCall]struct{}{},
		orphans:       map[string]*orphan{},
		resuming:      map[string]int{},
		idle:          make(chan struct{}),
	}
}

// postTagOf is the tag the guard gave the POST that carried req, or ""
// for a request that came by no POST (stdio).
func postTagOf(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil {
		if _, facts := factsOf(ex.TokenInfo); facts != nil {
			return facts.post
		}
	}
	return ""
}

// middleware admits or refuses each tools/call and makes it cancellable.
func (c *callTracker) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		sid := callerKey(req)
		tag := postTagOf(req)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		tc := &trackedCall{session: sid, tag: tag, cancel: cancel}
		if err := c.admit(tc); err != nil {
			return nil, err
		}
		defer c.release(tc)
		return next(ctx, method, req)
	}
}

func (c *callTracker) admit(tc *trackedCall) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return &jsonrpc.Error{Code: codeServerBusy, Message: "the server is shutting down and accepts no new calls"}
	}
	if n := c.perSession[tc.session]; n >= c.maxPerSession {
		return &jsonrpc.Error{Code: codeServerBusy, Message: fmt.Sprintf(
			"this session already has %d calls in flight, the most allowed (--max-session-calls); wait for one to finish and retry", n)}
	}
	c.perSession[tc.session]++
	c.calls[tc] = struct{}{}
	return nil
}

func (c *callTracker) release(tc *trackedCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perSession[tc.session]--; c.perSession[tc.session] <= 0 {
		delete(c.perSession, tc.session)
	}
	delete(c.calls, tc)
	if o, ok := c.orphans[tc.tag]; ok && !c.tagBusyLocked(tc.tag) {
		o.timer.Stop()
		delete(c.orphans, tc.tag)
	}
	c.signalIdleLocked()
}

// busy reports whether the session has calls or requests in flight.
func (c *callTracker) busy(sid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.perSession[sid] > 0 || c.resuming[sid] > 0
}

func (c *callTracker) tagBusyLocked(tag string) bool {
	for tc := range c.calls {
		if tc.tag == tag {
			return true
		}
	}
	return false
}

// orphan starts the resume window for the calls a dropped POST carried.
func (c *callTracker) orphan(tag string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sid := ""
	found := false
	for tc := range c.calls {
		if tc.tag == tag {
			sid, found = tc.session, true
			break
		}
	}
	if !found {
		return
	}
	o := &orphan{session: sid, timer: time.AfterFunc(c.resumeWindow, func() { c.cancelTag(tag) })}
	if c.resuming[sid] > 0 {
		// The client already came back on another stream.
		o.timer.Stop()
	}
	c.orphans[tag] = o
}

// cancelTag cancels the calls a dropped POST carried.
func (c *callTracker) cancelTag(tag string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.orphans, tag)
	for tc := range c.calls {
		if tc.tag == tag {
			tc.cancel()
		}
	}
}

// resumed pauses the resume windows of a session whose client came back;
// resumeEnded must follow.
func (c *callTracker) resumed(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resuming[sid]++
	for _, o := range c.orphans {
		if o.session == sid {
			o.timer.Stop()
		}
	}
}

// resumeEnded notes that a resumed stream ended. When no other resumed
// stream of the session is open, the resume windows of its orphaned calls
// start again: a stream that ended normally delivered every result (those
// calls are gone), one refused or dropped needs the client back again.
func (c *callTracker) resumeEnded(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.resuming[sid]--; c.resuming[sid] > 0 {
		return
	}
	delete(c.resuming, sid)
	for _, o := range c.orphans {
		if o.session == sid {
			o.timer.Reset(c.resumeWindow)
		}
	}
}

func (c *callTracker) postStarted() {
	c.mu.Lock()
	c.posts++
	c.mu.Unlock()
}

func (c *callTracker) postDone() {
	c.mu.Lock()
	c.posts--
	c.signalIdleLocked()
	c.mu.Unlock()
}

func (c *callTracker) signalIdleLocked() {
	if c.posts == 0 && len(c.calls) == 0 {
		close(c.idle)
		c.idle = make(chan struct{})
	}
}

func (c *callTracker) startDraining() {
	c.mu.Lock()
	c.draining = true
	c.mu.Unlock()
}

func (c *callTracker) isDraining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining
}

func (c *callTracker) inFlight() (calls, posts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls), c.posts
}

// waitIdle waits up to d for no calls and no POSTs in flight.
func (c *callTracker) waitIdle(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		if c.posts == 0 && len(c.calls) == 0 {
			c.mu.Unlock()
			return true
		}
		idle := c.idle
		c.mu.Unlock()
		select {
		case <-idle:
		case <-deadline.C:
			return false
		}
	}
}

// cancelAll cancels every call in flight and reports how many there were.
func (c *callTracker) cancelAll() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for tc := range c.calls {
		tc.cancel()
	}
	return len(c.calls)
}

package server

import (
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// State without protocol sessions.
//
// From protocol version 2026-07-28 on there are no protocol sessions over
// HTTP (SEP-2567 removed Mcp-Session-Id; SEP-2575 the initialize
// handshake): every request stands alone, and go-sdk serves each in a
// throwaway MCP session. Nothing in the protocol says that two requests
// come from the same host, but the bearer token a request carries does.
// So the state a session would keep (current directory, files read,
// background tasks, persisted results, todo list, the answers given to
// permission prompts) is kept per principal: one per token the server
// accepts (--token, each --client-token, or the one anonymous principal of
// --no-auth). A principal's state lives while requests keep coming and
// closes, like an idle session, after --session-timeout without one.
//
// The HTTP guard names the principal of every request in the TokenInfo
// that go-sdk's bearer-token middleware puts in the request's context
// (guard.go: verify, requestFacts), marks those it routes to the
// sessionless handler, and the handlers look their state up by it. No
// header names a principal.

// principal is the state of one principal.
type principal struct {
	ts     *tools.Session // made on first use
	active int            // requests in flight
	timer  *time.Timer    // closes the state when idle; nil while active
	gen    int            // bumped at every request, so a stale timer does nothing
}

// principals keeps the state of every principal.
type principals struct {
	mu     sync.Mutex
	byID   map[string]*principal
	closed bool // the server closed: no state is made any more
}

// principalOf returns the principal whose state a request without a
// protocol session works in, or "" for a request that belongs to a
// protocol session (or arrived on stdio).
func principalOf(extra *mcp.RequestExtra) string {
	if extra == nil {
		return ""
	}
	principal, facts := factsOf(extra.TokenInfo)
	if facts == nil || !facts.sessionless {
		return ""
	}
	return principal
}

// principalName is a principal as the caller of a request (callerOf).
type principalName string

// callerOf is whom a request's state belongs to: its principal, or its
// protocol session (the *mcp.ServerSession itself, as a stdio session has
// no ID). Callers compare with ==.
func callerOf(req mcp.Request) any {
	if p := principalOf(req.GetExtra()); p != "" {
		return principalName(p)
	}
	return req.GetSession()
}

// callerKey is callerOf as a string, for the HTTP server's per-caller
// limits: "principal:NAME", or the protocol session's ID.
func callerKey(req mcp.Request) string {
	if p := principalOf(req.GetExtra()); p != "" {
		return "principal:" + p
	}
	if ss := req.GetSession(); ss != nil {
		return ss.ID()
	}
	return ""
}

// stateOf returns the tools.Session a request works in: its principal's
// or its protocol session's, made on first use.
func (s *Server) stateOf(ss *mcp.ServerSession, extra *mcp.RequestExtra) (*tools.Session, error) {
	if name := principalOf(extra); name != "" {
		return s.principalSession(name)
	}
	return s.session(ss)
}

// principalSession returns the state of the named principal, making it on
// first use.
func (s *Server) principalSession(name string) (*tools.Session, error) {
	s.principals.mu.Lock()
	defer s.principals.mu.Unlock()
	p := s.principals.byID[name]
	if s.principals.closed || p == nil {
		// A request routed here always began (principalBegin) first, so
		// only Close leaves it without an entry.
		return nil, tools.ErrClosed
	}
	if p.ts == nil {
		ts, err := tools.NewSession(s.cfg.Session) // a fresh random ID
		if err != nil {
			return nil, err
		}
		p.ts = ts
		s.cfg.Logger.Info("principal state created", "principal", name, "session", ts.ID())
	}
	return p.ts, nil
}

// principalState returns the named principal's state, or nil when it has
// none (it is not made).
func (s *Server) principalState(name string) *tools.Session {
	s.principals.mu.Lock()
	defer s.principals.mu.Unlock()
	if p := s.principals.byID[name]; p != nil {
		return p.ts
	}
	return nil
}

// principalBegin notes a request of the named principal: its state stays
// while the request is in flight. principalEnd must follow.
func (s *Server) principalBegin(name string) {
	s.principals.mu.Lock()
	defer s.principals.mu.Unlock()
	if s.principals.byID == nil {
		s.principals.byID = map[string]*principal{}
	}
	p := s.principals.byID[name]
	if p == nil {
		p = &principal{}
		s.principals.byID[name] = p
	}
	p.active++
	p.gen++
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
}

// principalEnd notes the end of a request of the named principal. When
// none is left in flight, its state closes after idle without another
// (never when idle is 0).
func (s *Server) principalEnd(name string, idle time.Duration) {
	s.principals.mu.Lock()
	defer s.principals.mu.Unlock()
	p := s.principals.byID[name]
	if p == nil {
		return
	}
	if p.active--; p.active > 0 || idle <= 0 {
		return
	}
	gen := p.gen
	p.timer = time.AfterFunc(idle, func() { s.expirePrincipal(name, gen) })
}

// expirePrincipal closes the state of a principal idle since request gen:
// its background processes are killed and its state removed, as for a
// session that times out.
func (s *Server) expirePrincipal(name string, gen int) {
	s.principals.mu.Lock()
	p := s.principals.byID[name]
	if p == nil || p.gen != gen || p.active > 0 {
		s.principals.mu.Unlock()
		return
	}
	delete(s.principals.byID, name)
	if p.ts == nil {
		s.principals.mu.Unlock()
		return
	}
	// Added under the lock that Close's takePrincipals takes before it
	// waits, so Close waits for this state too.
	s.closing.Add(1)
	s.principals.mu.Unlock()
	defer s.closing.Done()
	s.cfg.Logger.Info("idle principal state closed", "principal", name, "session", p.ts.ID())
	s.closeState(p.ts)
}

// takePrincipals takes every principal's state, for Close; none is made
// after it.
func (s *Server) takePrincipals() []*tools.Session {
	s.principals.mu.Lock()
	defer s.principals.mu.Unlock()
	s.principals.closed = true
	var out []*tools.Session
	for name, p := range s.principals.byID {
		if p.timer != nil {
			p.timer.Stop()
		}
		if p.ts != nil {
			out = append(out, p.ts)
		}
		delete(s.principals.byID, name)
	}
	return out
}

// closeState ends a tools.Session: its persisted results are unlisted,
// its background processes killed and its state removed.
func (s *Server) closeState(ts *tools.Session) {
	s.unpublishResults(ts)
	if err := ts.Close(); err != nil {
		s.cfg.Logger.Warn("closing session", "session", ts.ID(), "err", err)
	}
}

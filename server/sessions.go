package server

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionOwnedBy reports whether the session sid may be used with the
// principal's token: a session is bound to the token that made it. An
// unknown session is left to go-sdk (it answers 404).
func (h *HTTPServer) sessionOwnedBy(sid, principal string) bool {
	h.smu.Lock()
	defer h.smu.Unlock()
	owner, ok := h.owner[sid]
	return !ok || owner == principal
}

// sessionStartWriter records a new session when the response that gives
// the client its id starts: from then on the client may use the session,
// and it counts as seen now.
type sessionStartWriter struct {
	http.ResponseWriter
	h         *HTTPServer
	principal string
	once      sync.Once
}

func (w *sessionStartWriter) started() {
	w.once.Do(func() { w.h.sessionCreated(w.Header().Get("Mcp-Session-Id"), w.principal) })
}

func (w *sessionStartWriter) WriteHeader(code int) {
	w.started()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionStartWriter) Write(b []byte) (int, error) {
	w.started()
	return w.ResponseWriter.Write(b)
}

// Flush and Unwrap keep the SSE streaming of the writer underneath.
func (w *sessionStartWriter) Flush() {
	w.started()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *sessionStartWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// admitSession makes room for a new session: under the cap it only
// counts it as being created; at the cap it closes the session idle the
// longest (no POST and no call in flight), and refuses when every session
// is busy. sessionCreated must follow.
//
// A session is recorded (given a last-seen time) when the response that
// gives its client the id starts; until then its client cannot use it,
// and it is counted among those being created, not among the live ones,
// and is never the one closed.
func (h *HTTPServer) admitSession() error {
	h.smu.Lock()
	defer h.smu.Unlock()
	live := map[string]*mcp.ServerSession{}
	stillClosing := map[string]bool{}
	for ss := range h.server.mcp.Sessions() {
		id := ss.ID()
		switch {
		case id == "":
			// A sessionless request's throwaway session.
		case h.evicted[id]:
			stillClosing[id] = true
		default:
			live[id] = ss
		}
	}
	h.evicted = stillClosing
	for id := range h.lastSeen {
		if live[id] == nil {
			delete(h.lastSeen, id) // ended: timed out, deleted or closed
			delete(h.owner, id)
		}
	}
	if len(h.lastSeen)+h.creating < h.opt.MaxSessions {
		h.creating++
		return nil
	}
	var oldest *mcp.ServerSession
	var oldestSeen time.Time
	for id, seen := range h.lastSeen {
		if h.calls.busy(id) {
			continue
		}
		if oldest == nil || seen.Before(oldestSeen) {
			oldest, oldestSeen = live[id], seen
		}
	}
	if oldest == nil {
		return fmt.Errorf("the server already has %d sessions, the most allowed (--max-sessions), and none is idle; retry later", h.opt.MaxSessions)
	}
	h.server.cfg.Logger.Info("session cap reached: closing the session idle the longest", "session", oldest.ID(), "idle", time.Since(oldestSeen).Round(time.Second))
	delete(h.lastSeen, oldest.ID())
	delete(h.owner, oldest.ID())
	h.evicted[oldest.ID()] = true
	h.creating++
	// Its background processes are killed and its state removed, as
	// when it times out.
	go oldest.Close()
	return nil
}

// sessionCreated ends admitSession's count of a session being created and
// records the session it became, made with the principal's token (id is
// "" when none was made).
func (h *HTTPServer) sessionCreated(id, principal string) {
	h.smu.Lock()
	defer h.smu.Unlock()
	h.creating--
	if id != "" {
		h.lastSeen[id] = time.Now()
		h.owner[id] = principal
	}
}

// seen notes a request to session sid.
func (h *HTTPServer) seen(sid string) {
	h.smu.Lock()
	defer h.smu.Unlock()
	if _, ok := h.lastSeen[sid]; ok {
		h.lastSeen[sid] = time.Now()
	}
}

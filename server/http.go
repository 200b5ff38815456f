package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Defaults for HTTPOptions fields left zero.
const (
	// messageOverhead is the room a request body (HTTP) or line (stdio)
	// has beyond the largest call input (--max-input-bytes) for the
	// JSON-RPC message around it.
	messageOverhead = 1 << 20
	// DefaultMaxSessionCalls is how many tools/call requests one session
	// may have in flight at once.
	DefaultMaxSessionCalls = 16
	// DefaultMaxSessions is how many MCP sessions one HTTP server keeps
	// at once.
	DefaultMaxSessions = 100
	// DefaultResumeWindow is how long the calls of a POST whose client
	// disconnected keep running, waiting for the client to resume the
	// stream with Last-Event-ID, before they are cancelled.
	DefaultResumeWindow = 5 * time.Second
	// drainCancelWait is how long cancelled calls get to report back
	// during shutdown before connections are closed.
	drainCancelWait = 3 * time.Second
)

// codeServerBusy is the JSON-RPC error code for a call refused because its
// session has too many calls in flight or the server is shutting down.
const codeServerBusy = -32000

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Addr is host:port to listen on; port 0 picks a free port.
	Addr string
	// Token is the bearer token clients must send. Empty with NoAuth false
	// is an error: the caller generates one.
	Token string
	// ClientTokens are further bearer tokens, each naming a principal of
	// its own: requests without a protocol session (protocol 2026-07-28)
	// keep their state per principal, so hosts given different tokens
	// keep separate state (see principal.go). Token is the principal
	// defaultPrincipal.
	ClientTokens []ClientToken
	// NoAuth serves without a token; only allowed on a loopback address.
	NoAuth bool
	// AllowRemote permits binding a non-loopback address (a token is still
	// required).
	AllowRemote bool
	// AllowedHosts and AllowedOrigins extend the loopback names accepted in
	// the Host and Origin headers.
	AllowedHosts, AllowedOrigins []string
	// TLSCert and TLSKey, both set, serve HTTPS.
	TLSCert, TLSKey string
	// SessionTimeout closes sessions idle this long; 0 never does. A closed
	// session's background tasks are killed and its state removed.
	SessionTimeout time.Duration
	// MaxBodyBytes bounds a request body; 0 means the pipeline's input
	// cap plus messageOverhead, so that a call the pipeline accepts fits.
	MaxBodyBytes int64
	// MaxSessionCalls caps the tools/call requests one session may have in
	// flight; 0 means DefaultMaxSessionCalls. Calls over the cap are
	// refused with codeServerBusy.
	MaxSessionCalls int
	// ResumeWindow is how long the calls of a disconnected POST stream wait
	// for the client to resume before they are cancelled; 0 means
	// DefaultResumeWindow.
	ResumeWindow time.Duration
	// MaxSessions caps the MCP sessions the server keeps at once; 0 means
	// DefaultMaxSessions. A new session over the cap closes the session
	// idle the longest (no request or call in flight), or, when every
	// session is busy, is refused with 503.
	MaxSessions int
	// AdminAddr, if set, is host:port of a second listener serving only
	// the probes and /metrics (see ops.go): /metrics needs no token there
	// when it is a loopback address.
	AdminAddr string
	// Ready, if set, is asked by /readyz besides the server's own state:
	// an error makes the server not ready (the sandbox check failed under
	// --sandbox required).
	Ready func() error
	// Metrics, if set, is served at /metrics (behind the token).
	Metrics *Metrics
}

// ClientToken is a further bearer token and the principal it names.
type ClientToken struct{ Name, Token string }

// Principals of the tokens that name none.
const (
	// defaultPrincipal is the principal of HTTPOptions.Token.
	defaultPrincipal = "default"
	// anonymousPrincipal is the principal of every request served with
	// NoAuth.
	anonymousPrincipal = "anonymous"
)

// HTTPServer is a running streamable HTTP endpoint.
type HTTPServer struct {
	// URL is the endpoint clients connect to (…/mcp).
	URL string
	// AdminURL is the admin listener's base URL (http://host:port), when
	// HTTPOptions.AdminAddr is set.
	AdminURL string

	server *Server
	srv    *http.Server
	ln     net.Listener
	tls    bool
	opt    HTTPOptions
	calls  *callTracker
	tokens []ClientToken // every accepted token with its principal

	admin   *http.Server // the admin listener's, if any
	adminLn net.Listener

	// sessions serves requests that belong to protocol sessions (before
	// 2026-07-28); sessionless serves the others, one throwaway MCP
	// session per request, their state kept per principal.
	sessions, sessionless http.Handler

	// Sessions, for the cap: when each was last sent a request (recorded
	// when the response that gives the client its id starts), the
	// principal that made it, and the new sessions being created.
	smu      sync.Mutex
	lastSeen map[string]time.Time
	owner    map[string]string
	creating int
	evicted  map[string]bool // closed for the cap, maybe not gone yet
}

// ListenHTTP checks opts and starts listening; call Serve to accept.
func (s *Server) ListenHTTP(opts HTTPOptions) (*HTTPServer, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: expected host:port: %w", opts.Addr, err)
	}
	loopback := isLoopbackHost(host)
	if !loopback && !opts.AllowRemote {
		return nil, fmt.Errorf("--addr %q is not a loopback address: pass --allow-remote (with a token) to serve other machines", opts.Addr)
	}
	if opts.NoAuth && !loopback {
		return nil, errors.New("--no-auth is only allowed on a loopback address")
	}
	if !opts.NoAuth && opts.Token == "" {
		return nil, errors.New("a bearer token is required (--token or AGENT_MCP_TOKEN), or --no-auth on loopback")
	}
	tokens, err := acceptedTokens(opts)
	if err != nil {
		return nil, err
	}
	if (opts.TLSCert == "") != (opts.TLSKey == "") {
		return nil, errors.New("--tls-cert and --tls-key must be given together")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = int64(s.cfg.Pipeline.InputLimit()) + messageOverhead
	}
	if opts.MaxSessionCalls <= 0 {
		opts.MaxSessionCalls = DefaultMaxSessionCalls
	}
	if opts.ResumeWindow <= 0 {
		opts.ResumeWindow = DefaultResumeWindow
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	scheme := "http"
	if opts.TLSCert != "" {
		scheme = "https"
	}
	h := &HTTPServer{server: s, ln: ln, tls: opts.TLSCert != "", opt: opts, tokens: tokens,
		calls:    newCallTracker(opts.MaxSessionCalls, opts.ResumeWindow),
		lastSeen: map[string]time.Time{}, owner: map[string]string{}, evicted: map[string]bool{}}
	h.URL = fmt.Sprintf("%s://%s/mcp", scheme, ln.Addr().String())
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	h.sessions = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:              s.cfg.Logger,
		SessionTimeout:      opts.SessionTimeout,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		EventStore:          mcp.NewMemoryEventStore(nil),
		// The guard checks Host first and is the stricter of the two
		// layers; the SDK's own check would refuse the extra names the
		// guard was told to accept, so it stands down only then.
		DisableLocalhostProtection: len(opts.AllowedHosts) > 0,
	})
	// go-sdk serves protocol 2026-07-28 over HTTP only statelessly: each
	// request in an MCP session of its own, closed after it. Its
	// server/discover answer then offers 2026-07-28 besides the older
	// versions. Without sessions a POST is the whole life of its request
	// (no stream to resume), so a client that drops it cancels its calls.
	h.sessionless = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       s.cfg.Logger,
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		DisableLocalhostProtection:   len(opts.AllowedHosts) > 0,
		PropagateRequestCancellation: true,
	})
	s.mcp.AddReceivingMiddleware(h.calls.middleware)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h.guard())
	h.opsRoutes(mux, func(next http.Handler) http.Handler {
		return h.hostChecked(h.authenticated(next))
	})
	h.srv = &http.Server{Handler: opts.Metrics.counted(mux), ReadHeaderTimeout: 10 * time.Second}
	if err := h.listenAdmin(); err != nil {
		ln.Close()
		return nil, err
	}
	return h, nil
}

// Serve accepts connections until ctx ends, then drains: new sessions are
// refused, in-flight calls get grace to finish, then the rest are
// cancelled, connections are closed and every session is closed (its
// background processes killed, its state removed).
func (h *HTTPServer) Serve(ctx context.Context, grace time.Duration) error {
	errc := make(chan error, 1)
	go h.serveAdmin()
	defer h.closeAdmin()
	go func() {
		if h.tls {
			errc <- h.srv.ServeTLS(h.ln, h.opt.TLSCert, h.opt.TLSKey)
		} else {
			errc <- h.srv.Serve(h.ln)
		}
	}()
	select {
	case err := <-errc:
		h.server.Close()
		return err
	case <-ctx.Done():
	}
	h.drain(grace)
	return nil
}

// drain shuts the endpoint down as Serve describes.
func (h *HTTPServer) drain(grace time.Duration) {
	log := h.server.cfg.Logger
	// The listener stays open while calls finish: new sessions and
	// sessionless requests get 503, and so does /readyz, which tells a
	// load balancer to send no more.
	h.calls.startDraining()
	calls, posts := h.calls.inFlight()
	log.Info("draining", "calls", calls, "requests", posts, "grace", grace)
	if !h.calls.waitIdle(grace) {
		n := h.calls.cancelAll()
		log.Warn("grace period over: cancelling calls", "calls", n)
		if !h.calls.waitIdle(drainCancelWait) {
			calls, posts := h.calls.inFlight()
			log.Warn("calls still running after cancellation; closing anyway", "calls", calls, "requests", posts)
		}
	}
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), time.Second)
	defer cancelShutdown()
	_ = h.srv.Shutdown(shutdownCtx) // stop accepting; idle connections close
	_ = h.srv.Close()               // ends standalone streams and anything left
	h.server.Close()
}

// route serves an authenticated request (see guard).
func (h *HTTPServer) route(w http.ResponseWriter, r *http.Request) {
	principal, facts := factsOfRequest(r)
	if facts == nil {
		// Unreachable: authenticated lets no request through without.
		http.Error(w, "Internal Server Error: request not authenticated", http.StatusInternalServerError)
		return
	}
	if r.ContentLength > h.opt.MaxBodyBytes {
		h.bodyTooLarge(w, fmt.Sprintf("request body of %d bytes", r.ContentLength))
		return
	}
	if sessionless(r) {
		facts.sessionless = true
		h.serveSessionless(w, r, principal, facts)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid != "" && !h.sessionOwnedBy(sid, principal) {
		http.Error(w, "Forbidden: the session belongs to another token", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		if sid == "" && h.refuseDraining(w) {
			return
		}
		if sid == "" {
			// The slot is taken only once the initialize body has been
			// read whole: a client sending its body slowly, or never
			// finishing it, holds a connection, never a session slot.
			body, err := readBody(r, h.opt.MaxBodyBytes)
			if err != nil {
				if errors.As(err, new(*http.MaxBytesError)) {
					h.bodyTooLarge(w, "request body")
					return
				}
				http.Error(w, "Bad Request: reading the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = preread(body)
			if err := h.admitSession(); err != nil {
				w.Header().Set("Retry-After", "5")
				http.Error(w, "Service Unavailable: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			sw := &sessionStartWriter{ResponseWriter: w, h: h, principal: principal}
			defer sw.started()
			w = sw
		} else {
			h.seen(sid)
		}
		h.servePOST(w, r, h.sessions, facts)
	case http.MethodGet:
		if sid != "" && r.Header.Get("Last-Event-ID") != "" {
			h.calls.resumed(sid)
			h.sessions.ServeHTTP(w, r)
			h.calls.resumeEnded(sid)
			return
		}
		h.sessions.ServeHTTP(w, r)
	default:
		h.sessions.ServeHTTP(w, r)
	}
}

// sessionless reports whether a request follows protocol 2026-07-28 or
// later, which has no protocol sessions: its Mcp-Protocol-Version header
// says so (go-sdk checks that it matches the request's _meta).
func sessionless(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= roundTripVersion
}

// serveSessionless serves a request without a protocol session in the
// state of its principal, which stays while the principal's requests are
// in flight and closes after SessionTimeout without one. A
// subscriptions/listen stream, open for as long as the client likes, is
// no activity (as a session's standalone stream is none) and no work a
// drain waits for.
func (h *HTTPServer) serveSessionless(w http.ResponseWriter, r *http.Request, principal string, facts *requestFacts) {
	if r.Method != http.MethodPost {
		h.sessionless.ServeHTTP(w, r) // refused: no GET stream, no DELETE
		return
	}
	if h.refuseDraining(w) {
		return
	}
	if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
		if h.serveTaskListen(w, r, principal) {
			return
		}
		h.sessionless.ServeHTTP(w, r)
		return
	}
	if h.serveTasks(w, r, principal) {
		return
	}
	h.server.principalBegin(principal)
	defer h.server.principalEnd(principal, h.opt.SessionTimeout)
	h.servePOST(w, r, h.sessionless, facts)
}

// servePOST tags a POST and serves it, noting the calls it carried when
// the client dropped it. The body is read here, once, into one buffer;
// a tools/call's large arguments are held aside (see held.go) and the
// SDK's handler, which would decode the whole body several times over,
// is given the call without them.
func (h *HTTPServer) servePOST(w http.ResponseWriter, r *http.Request, next http.Handler, facts *requestFacts) {
	body, err := readBody(r, h.opt.MaxBodyBytes)
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			h.bodyTooLarge(w, "request body")
			return
		}
		http.Error(w, "Bad Request: reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	tag := tools.RandomID()
	facts.post = tag
	body, token := h.server.held.HoldBody(body, tag)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if token != "" {
		defer h.dropHeld(r, token)
	}
	h.calls.postStarted()
	defer h.calls.postDone()
	next.ServeHTTP(w, r)
	if r.Context().Err() != nil {
		h.calls.orphan(tag)
	}
}

// dropHeld drops the arguments held for the call a POST carried, which
// the call took already unless the SDK refused it before it ran (a bad
// header, an unknown session, the session's call cap): they are dropped
// when the POST is served. When the client dropped the POST, its call may
// still be on its way to being run; they are dropped after the resume
// window, when a call still waiting for its client is cancelled anyway.
func (h *HTTPServer) dropHeld(r *http.Request, token string) {
	if r.Context().Err() == nil {
		h.server.held.Drop(token)
		return
	}
	time.AfterFunc(h.opt.ResumeWindow, func() { h.server.held.Drop(token) })
}

// refuseDraining answers 503 when the server is draining (no new session
// or sessionless request is started then), and says whether it did.
func (h *HTTPServer) refuseDraining(w http.ResponseWriter) bool {
	if !h.calls.isDraining() {
		return false
	}
	w.Header().Set("Retry-After", "5")
	http.Error(w, "Service Unavailable: the server is shutting down", http.StatusServiceUnavailable)
	return true
}

// bodyTooLarge refuses a request whose body (what) is over the cap.
func (h *HTTPServer) bodyTooLarge(w http.ResponseWriter, what string) {
	http.Error(w, fmt.Sprintf("%s exceeds the limit of %d bytes (--max-body-bytes; by default the largest tool call input, --max-input-bytes, and 1 MiB around it)", what, h.opt.MaxBodyBytes), http.StatusRequestEntityTooLarge)
}

// readBody reads a request's body whole, at most limit bytes (more is a
// *http.MaxBytesError). With its length known (checked against limit
// already) it is read straight into a buffer of that size; otherwise in
// pieces joined once, as stdio's lines are, and after a body over 512
// KiB the pieces are returned to the system at once, so that what is
// decoded from the body does not come on top of them.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if p, ok := r.Body.(*prereadBody); ok {
		return p.b, nil // read already, by the task layer
	}
	if n := r.ContentLength; n >= 0 && n <= limit {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	var pieces [][]byte
	n := 0
	src := http.MaxBytesReader(nil, r.Body, limit)
	for {
		piece := make([]byte, min(max(n, 64<<10), 1<<20))
		k, err := io.ReadFull(src, piece)
		if k > 0 {
			pieces = append(pieces, piece[:k])
			n += k
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	body := make([]byte, 0, n)
	for _, p := range pieces {
		body = append(body, p...)
	}
	if n >= returnAfterLine {
		debug.FreeOSMemory() // the pieces are garbage from here on
	}
	return body, nil
}

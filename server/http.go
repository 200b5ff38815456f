package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// guard checks Host, Origin and the bearer token before MCP sees a request,
// routes it by protocol (a request of 2026-07-28 or later belongs to no
// protocol session and is served sessionless, in its principal's state),
// and tracks POSTs so a disconnected client's calls can be cancelled.
//
// Who sent a request travels in its context, never in a header: go-sdk's
// bearer-token middleware (auth.RequireBearerToken) puts the TokenInfo
// that verify makes into the request's context, the SDK hands it to every
// message the request carries (mcp.RequestExtra.TokenInfo), and route
// notes there what it learns on the way (requestFacts). A header a client
// sends names nothing.
func (h *HTTPServer) guard() http.Handler {
	authed := h.authenticated(http.HandlerFunc(h.route))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.hostAllowed(r) {
			http.Error(w, "Forbidden: Host header not allowed", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		authed.ServeHTTP(w, r)
	})
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

// requestFacts is what the guard learned of an HTTP request beyond its
// principal (the TokenInfo's UserID). It lives in the request's
// TokenInfo (under factsKey in Extra), made fresh for each request by
// verify and filled in by route before the SDK sees the request.
type requestFacts struct {
	// sessionless: the request belongs to no protocol session (protocol
	// 2026-07-28 or later), so its state is its principal's.
	sessionless bool
	// post is the tag of the POST that carried it: the calls of a POST
	// whose client disconnected are found by it, and held arguments are
	// taken only by a call of their own POST.
	post string
}

// factsKey is requestFacts' key in a TokenInfo's Extra.
const factsKey = "agent-mcp/request"

// factsOf returns the principal and facts of a request that came over
// HTTP, from its TokenInfo; facts is nil for one that did not (stdio).
func factsOf(ti *auth.TokenInfo) (principal string, facts *requestFacts) {
	if ti == nil {
		return "", nil
	}
	facts, _ = ti.Extra[factsKey].(*requestFacts)
	return ti.UserID, facts
}

// factsOfRequest is factsOf for the HTTP request itself, in the guard.
func factsOfRequest(r *http.Request) (string, *requestFacts) {
	return factsOf(auth.TokenInfoFromContext(r.Context()))
}

// authenticated runs next with the request's TokenInfo in its context, made
// by verify through go-sdk's auth.RequireBearerToken, and refuses a request
// without an accepted token with 401 and a Bearer challenge.
//
// With --no-auth every request is the anonymous principal's and needs no
// token: the middleware is shown one while it runs (the client's
// Authorization header is put back before next sees the request), so that
// such requests carry a TokenInfo as every other does.
func (h *HTTPServer) authenticated(next http.Handler) http.Handler {
	require := auth.RequireBearerToken(h.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The challenge of a refusal; an accepted request's answer
		// goes without it.
		w.Header().Set("WWW-Authenticate", `Bearer realm="agent-mcp"`)
		sent, hadAuth := r.Header["Authorization"]
		if h.opt.NoAuth {
			r.Header.Set("Authorization", "Bearer "+anonymousPrincipal)
		}
		require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Del("WWW-Authenticate")
			if h.opt.NoAuth {
				delete(r.Header, "Authorization")
				if hadAuth {
					r.Header["Authorization"] = sent
				}
			}
			next.ServeHTTP(w, r)
		})).ServeHTTP(w, r)
	})
}

// verify is the auth.TokenVerifier of the guard: the principal a token
// names (every accepted token compared, in constant time), as the
// TokenInfo's UserID, with fresh requestFacts. go-sdk also binds a
// protocol session to the UserID of the request that made it.
func (h *HTTPServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	principal := ""
	if h.opt.NoAuth {
		principal = anonymousPrincipal
	}
	for _, t := range h.tokens {
		if subtle.ConstantTimeCompare([]byte(token), []byte(t.Token)) == 1 {
			principal = t.Name
		}
	}
	if principal == "" {
		return nil, fmt.Errorf("%w: send Authorization: Bearer <token> with a token this server accepts", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: principal, Extra: map[string]any{factsKey: &requestFacts{}}}, nil
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

// acceptedTokens lists the tokens opts accept with their principals, and
// checks the client tokens: each named, none repeated.
func acceptedTokens(opts HTTPOptions) ([]ClientToken, error) {
	if opts.NoAuth {
		if len(opts.ClientTokens) > 0 {
			return nil, errors.New("--client-token needs bearer tokens: it cannot be used with --no-auth")
		}
		return nil, nil
	}
	tokens := []ClientToken{{Name: defaultPrincipal, Token: opts.Token}}
	for _, t := range opts.ClientTokens {
		switch {
		case t.Name == "" || strings.ContainsAny(t.Name, " \t\r\n"):
			return nil, fmt.Errorf("--client-token %q: expected NAME=TOKEN with a name of no spaces", t.Name+"=…")
		case len(t.Token) < 16:
			return nil, fmt.Errorf("--client-token %s: the token must be at least 16 characters, got %d", t.Name, len(t.Token))
		}
		for _, o := range tokens {
			if o.Name == t.Name {
				return nil, fmt.Errorf("--client-token %s: the name %q is taken (%q is --token's)", t.Name, t.Name, defaultPrincipal)
			}
			if o.Token == t.Token {
				return nil, fmt.Errorf("--client-token %s: the same token as %s; each principal needs its own", t.Name, o.Name)
			}
		}
		tokens = append(tokens, t)
	}
	return tokens, nil
}

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

// hostAllowed accepts loopback names, the configured extra hosts, and —
// when serving other machines — the literal address the connection came
// in on (an IP literal cannot be rebound by DNS).
func (h *HTTPServer) hostAllowed(r *http.Request) bool {
	host := r.Host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	host = strings.Trim(host, "[]")
	if isLoopbackHost(host) || slices.Contains(h.opt.AllowedHosts, host) {
		return true
	}
	if !h.opt.AllowRemote {
		return false
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		if lh, _, err := net.SplitHostPort(la.String()); err == nil {
			if ip := net.ParseIP(host); ip != nil && ip.Equal(net.ParseIP(strings.Trim(lh, "[]"))) && !isLoopbackHost(lh) {
				return true
			}
		}
	}
	return false
}

func (h *HTTPServer) originAllowed(origin string) bool {
	if slices.Contains(h.opt.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

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

// ServeStdio serves one session on stdin/stdout until the client closes
// the stream or ctx ends, then closes every session. A line that is not a
// JSON-RPC message is answered with an error and the session goes on.
func (s *Server) ServeStdio(ctx context.Context) error {
	defer s.Close()
	err := s.serveIO(ctx, os.Stdin, os.Stdout)
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

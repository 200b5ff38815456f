package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Addr is host:port to listen on; port 0 picks a free port.
	Addr string
	// Token is the bearer token clients must send. Empty with NoAuth false
	// is an error: the caller generates one.
	Token string
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
	// SessionTimeout closes sessions idle this long; 0 never does.
	SessionTimeout time.Duration
	// MaxBodyBytes bounds a request body; 0 means 4 MiB.
	MaxBodyBytes int64
}

// HTTPServer is a running streamable HTTP endpoint.
type HTTPServer struct {
	// URL is the endpoint clients connect to (…/mcp).
	URL string
	srv *http.Server
	ln  net.Listener
	tls bool
	opt HTTPOptions
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
	if (opts.TLSCert == "") != (opts.TLSKey == "") {
		return nil, errors.New("--tls-cert and --tls-key must be given together")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	scheme := "http"
	if opts.TLSCert != "" {
		scheme = "https"
	}
	h := &HTTPServer{ln: ln, tls: opts.TLSCert != "", opt: opts}
	h.URL = fmt.Sprintf("%s://%s/mcp", scheme, ln.Addr().String())
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.cfg.Logger,
		SessionTimeout:      opts.SessionTimeout,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		EventStore:          mcp.NewMemoryEventStore(nil),
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h.guard(mcpHandler))
	h.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return h, nil
}

// Serve accepts connections until ctx ends, then shuts down gracefully
// within grace.
func (h *HTTPServer) Serve(ctx context.Context, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() {
		if h.tls {
			errc <- h.srv.ServeTLS(h.ln, h.opt.TLSCert, h.opt.TLSKey)
		} else {
			errc <- h.srv.Serve(h.ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := h.srv.Shutdown(sctx); err != nil {
		_ = h.srv.Close()
	}
	return nil
}

// guard checks Host, Origin and the bearer token before MCP sees a request.
func (h *HTTPServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.hostAllowed(r.Host) {
			http.Error(w, "Forbidden: Host header not allowed", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		if !h.opt.NoAuth {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.opt.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agent-mcp"`)
				http.Error(w, "Unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (h *HTTPServer) hostAllowed(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.Trim(host, "[]")
	if isLoopbackHost(host) || slices.Contains(h.opt.AllowedHosts, host) {
		return true
	}
	// A server bound to a specific non-loopback address answers to it.
	if lh, _, err := net.SplitHostPort(h.ln.Addr().String()); err == nil && h.opt.AllowRemote && host == lh {
		return true
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

// ServeStdio serves one session on stdin/stdout until the client closes
// the stream or ctx ends, then closes every session.
func (s *Server) ServeStdio(ctx context.Context) error {
	defer s.Close()
	err := s.mcp.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

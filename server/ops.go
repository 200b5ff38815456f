package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// What an operator's tools reach besides /mcp: liveness and readiness
// probes and Prometheus metrics, on the HTTP listener and, with
// HTTPOptions.AdminAddr, on a listener of their own.
//
//   - /healthz answers 200 while the process serves.
//   - /readyz answers 200 when a new session would be accepted, and 503
//     while draining, when every session slot is taken by a busy session,
//     or when HTTPOptions.Ready reports a problem (the sandbox check under
//     --sandbox required).
//   - /metrics serves HTTPOptions.Metrics, behind the bearer token on the
//     MCP listener; on the admin listener without one only when it is a
//     loopback address (and then only to loopback Host names).
//
// The probes need no token and carry no data beyond one word of why, so
// that kubelet (which sends the pod's address as Host) can reach them.

// healthz answers that the process serves.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "ok")
}

// readyz answers whether a new session would be accepted now.
func (h *HTTPServer) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if why := h.notReady(); why != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready:", why)
		return
	}
	fmt.Fprintln(w, "ready")
}

// notReady says in a few words why a new session would not be accepted
// now, or "" when it would.
func (h *HTTPServer) notReady() string {
	if h.calls.isDraining() {
		return "draining"
	}
	if h.opt.Ready != nil {
		if err := h.opt.Ready(); err != nil {
			return "sandbox unavailable"
		}
	}
	if h.sessionsFull() {
		return "every session slot is busy"
	}
	return ""
}

// sessionsFull reports whether a new session would be refused: the cap is
// reached and no session is idle enough to be closed for it.
func (h *HTTPServer) sessionsFull() bool {
	h.smu.Lock()
	defer h.smu.Unlock()
	live := map[string]bool{}
	for ss := range h.server.mcp.Sessions() {
		if id := ss.ID(); id != "" && !h.evicted[id] {
			live[id] = true
		}
	}
	n := h.creating
	idle := false
	for id := range h.lastSeen {
		if !live[id] {
			continue
		}
		n++
		idle = idle || !h.calls.busy(id)
	}
	return n >= h.opt.MaxSessions && !idle
}

// opsRoutes adds the probes and /metrics to mux. metricsAuth wraps the
// metrics handler (the token check, or the loopback Host check).
func (h *HTTPServer) opsRoutes(mux *http.ServeMux, metricsAuth func(http.Handler) http.Handler) {
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
	if m := h.opt.Metrics; m != nil {
		mux.Handle("GET /metrics", metricsAuth(m.Handler()))
	}
}

// hostChecked refuses a request whose Host is not one the server accepts
// (loopback names and --allow-host), as the MCP endpoint does.
func (h *HTTPServer) hostChecked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.hostAllowed(r) {
			http.Error(w, "Forbidden: Host header not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// listenAdmin starts the admin listener of opts.AdminAddr, if any: the
// probes, and /metrics without a token on a loopback address or with one
// elsewhere.
func (h *HTTPServer) listenAdmin() error {
	if h.opt.AdminAddr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(h.opt.AdminAddr)
	if err != nil {
		return fmt.Errorf("--admin-addr %q: expected host:port: %w", h.opt.AdminAddr, err)
	}
	if !isLoopbackHost(host) && !h.opt.AllowRemote {
		return fmt.Errorf("--admin-addr %q is not a loopback address: pass --allow-remote to serve probes and metrics to other machines (metrics then need the token)", h.opt.AdminAddr)
	}
	ln, err := net.Listen("tcp", h.opt.AdminAddr)
	if err != nil {
		return fmt.Errorf("listening on --admin-addr %s: %w", h.opt.AdminAddr, err)
	}
	metricsAuth := func(next http.Handler) http.Handler { return h.authenticated(next) }
	if isLoopbackHost(host) {
		metricsAuth = h.hostChecked
	}
	mux := http.NewServeMux()
	h.opsRoutes(mux, metricsAuth)
	h.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	h.adminLn = ln
	h.AdminURL = "http://" + ln.Addr().String()
	return nil
}

// serveAdmin serves the admin listener until it is closed.
func (h *HTTPServer) serveAdmin() {
	if h.admin == nil {
		return
	}
	if err := h.admin.Serve(h.adminLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
		h.server.cfg.Logger.Warn("admin listener", "err", err)
	}
}

// closeAdmin stops the admin listener.
func (h *HTTPServer) closeAdmin() {
	if h.admin == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = h.admin.Shutdown(ctx)
	_ = h.admin.Close()
}

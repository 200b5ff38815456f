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

	"github.com/modelcontextprotocol/go-sdk/auth"
)

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
	// taskInline, set by the task layer for a call that becomes an MCP
	// task after it has run this long (tasks_http.go), reaches the tool
	// as tools.WithMCPTask.
	taskInline *time.Duration
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

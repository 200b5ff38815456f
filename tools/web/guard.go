package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/netguard"
)

// blockedAddressError is returned by the dialer when a connection would go
// to an address the operator has not allowed (loopback, private, link-local
// and the like).
type blockedAddressError struct {
	addr netip.Addr
	kind string
}

func (e *blockedAddressError) Error() string {
	return fmt.Sprintf("%s is not a public address (%s)", e.addr, e.kind)
}

// addressKind says why ip is not a public unicast address, or "" when it is.
func addressKind(ip netip.Addr) string { return netguard.AddressKind(ip) }

// isLoopbackHost reports whether host (no port) names this machine:
// "localhost" or a loopback IP literal. Such URLs are not upgraded to https.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// newGuardedClient returns an HTTP client that checks every address it
// connects to at dial time, after DNS resolution, so a name that resolves
// (or re-resolves) to an internal address cannot be used to reach it.
// Proxies from the environment are not used: a proxy would resolve names
// itself, out of the guard's sight. Redirects are not followed; the caller
// decides about each one.
func newGuardedClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			if allowPrivate {
				return nil
			}
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("dialing %q: not an IP address", address)
			}
			if kind := addressKind(ip); kind != "" {
				return &blockedAddressError{addr: ip, kind: kind}
			}
			return nil
		},
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          20,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// describeFetchError words a transport failure for the model.
func describeFetchError(ctx context.Context, rawURL string, timeout time.Duration, err error) error {
	var blocked *blockedAddressError
	if errors.As(err, &blocked) {
		return fmt.Errorf("WebFetch refused %s: %s. Requests to loopback, private, link-local and other non-public addresses are refused unless the operator starts agent-mcp with --web-allow-private", rawURL, blocked)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("WebFetch timed out after %s fetching %s", timeout, rawURL)
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() && ctx.Err() == nil {
		return fmt.Errorf("WebFetch timed out after %s fetching %s", timeout, rawURL)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("WebFetch could not resolve the host of %s: %v", rawURL, dnsErr)
	}
	return fmt.Errorf("WebFetch failed to fetch %s: %v", rawURL, err)
}

package egress

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/netguard"
)

// Answer is the user's answer to a question about a host.
type Answer int

// Answers.
const (
	// Refuse the connection (and every later one of this command to the
	// host).
	Refuse Answer = iota
	// AllowOnce admits the host for the rest of this command.
	AllowOnce
	// AllowSession admits the host for the rest of the session.
	AllowSession
)

// Grants are the hosts a session's user allowed for the session.
type Grants struct {
	mu    sync.Mutex
	hosts map[string]bool
}

// Allow records host.
func (g *Grants) Allow(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hosts == nil {
		g.hosts = map[string]bool{}
	}
	g.hosts[normal(host)] = true
}

// Allows reports whether host was allowed.
func (g *Grants) Allows(host string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hosts[normal(host)]
}

// Handler serves the proxy's connections for one command.
type Handler struct {
	// Rules judge each host.
	Rules Rules
	// Session holds the session's "allow for the session" answers; nil
	// means none are kept.
	Session *Grants
	// Ask puts an unlisted host to the user; nil when nobody can be
	// asked (the connection is refused, naming the rule to add).
	Ask func(ctx context.Context, host string, port int) (Answer, error)
	// Notice receives one line for every refused connection, for the
	// command's output; nil drops them.
	Notice func(line string)
	// Hosts maps names to addresses ahead of DNS ([HostsEnv]); the
	// addresses are checked as resolved ones are.
	Hosts map[string]netip.Addr
	// DialTimeout bounds each connection attempt; 0 is 30s.
	DialTimeout time.Duration
	// Loopback, when set, connects to a port of the loopback the
	// command's session sees (its own network namespace's, or another
	// command's): a connection to localhost, 127.0.0.0/8 or ::1 goes
	// there first, without a question. Failing that (or without it) it
	// goes to the host's own loopback only where a rule names that
	// address and port ([Rules.NamesLoopback]), and is refused otherwise,
	// naming the setting that opens it.
	Loopback func(ctx context.Context, port int) (net.Conn, error)
	// Inject handles the session's masked credentials (inject.go): TLS
	// toward their hosts is terminated and their sentinels replaced by
	// the real values; a sentinel toward any other host is refused. nil
	// when the session masks none.
	Inject *Inject

	mu         sync.Mutex
	decided    map[string]Answer // this command's answers, by host
	notAllowed int               // questions of this command not answered yes
	askMu      sync.Mutex        // one question at a time
}

// MaxRefusedQuestions is how many of one command's questions may go
// unallowed (answered no, or not answered) before its further unlisted
// hosts are refused without one: a command (a prompt-injected one, or a
// loop) cannot wear the user down with a question per host until one is
// allowed by mistake.
const MaxRefusedQuestions = 3

// refusal is a refused connection: what the client and the command's
// output are told.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// allowRule is the advice on how to admit host.
func allowRule(host string) string {
	return fmt.Sprintf("add WebFetch(domain:%s) to permissions.allow or %q to sandbox.network.allowedDomains", normal(host), normal(host))
}

// decide judges host:port and returns the addresses a connection may go
// to, or the refusal.
func (h *Handler) decide(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	host = normal(host)
	if host == "" {
		return nil, &refusal{"no host given"}
	}
	if !validHost(host) {
		// Not put to the user: a name is shown in the question, and
		// a command must not write control characters or a second line
		// into it (a SOCKS5 name is raw bytes).
		return nil, &refusal{fmt.Sprintf("%q is neither a host name nor an IP address", host)}
	}
	switch v, rule := h.Rules.Judge(host); v {
	case Denied:
		return nil, &refusal{fmt.Sprintf("refused by the deny rule %q (sandbox.network.deniedDomains or a WebFetch(domain:…) deny rule)", rule)}
	case Unlisted:
		if err := h.admit(ctx, host, port); err != nil {
			return nil, err
		}
	}
	addrs, err := h.resolve(ctx, host)
	if err != nil {
		return nil, &refusal{fmt.Sprintf("%s could not be resolved: %v", host, err)}
	}
	var ok []netip.Addr
	var blocked []string
	for _, a := range addrs {
		if kind := netguard.AddressKind(a); kind != "" && !h.Rules.NamesAddress(a) {
			blocked = append(blocked, fmt.Sprintf("%s (%s)", a, kind))
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		return nil, &refusal{fmt.Sprintf("%s resolves to %s, not a public address; such addresses are reached only when a rule names the address itself (WebFetch(domain:%s))",
			host, strings.Join(blocked, ", "), addrs[0])}
	}
	return ok, nil
}

// admit decides an unlisted host: the session's and this command's
// answers, else a question.
func (h *Handler) admit(ctx context.Context, host string, port int) error {
	if h.Session.Allows(host) {
		return nil
	}
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.mu.Lock()
	a, asked := h.decided[host]
	h.mu.Unlock()
	if !asked {
		if h.Session.Allows(host) {
			return nil
		}
		if h.Ask == nil {
			return &refusal{fmt.Sprintf("no rule allows %s and nobody can be asked; to allow it %s", host, allowRule(host))}
		}
		h.mu.Lock()
		worn := h.notAllowed >= MaxRefusedQuestions
		h.mu.Unlock()
		if worn {
			return &refusal{fmt.Sprintf("no rule allows %s, and the user was not asked: %d of this command's questions were not allowed already; to allow it %s", host, MaxRefusedQuestions, allowRule(host))}
		}
		var err error
		a, err = h.Ask(ctx, host, port)
		h.mu.Lock()
		if err != nil || (a != AllowOnce && a != AllowSession) {
			h.notAllowed++
		}
		if err == nil {
			if h.decided == nil {
				h.decided = map[string]Answer{}
			}
			h.decided[host] = a
		}
		h.mu.Unlock()
		if err != nil {
			return &refusal{fmt.Sprintf("no rule allows %s and asking failed (%v); to allow it %s", host, err, allowRule(host))}
		}
	}
	switch a {
	case AllowOnce:
		return nil
	case AllowSession:
		if h.Session != nil {
			h.Session.Allow(host)
		}
		return nil
	}
	return &refusal{fmt.Sprintf("the user refused the connection to %s; to allow it %s", host, allowRule(host))}
}

func (h *Handler) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	if a, ok := h.Hosts[host]; ok {
		return []netip.Addr{a}, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errors.New("no address")
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}

// dial connects to the first of addrs that answers.
func (h *Handler) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	d := net.Dialer{Timeout: h.DialTimeout}
	if d.Timeout == 0 {
		d.Timeout = 30 * time.Second
	}
	var err error
	for _, a := range addrs {
		var c net.Conn
		if c, err = d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String()); err == nil {
			return c, nil
		}
	}
	return nil, err
}

// refused tells the command's output about a refused connection.
func (h *Handler) refused(host string, port int, err error) {
	if h.Notice == nil {
		return
	}
	shown := normal(host)
	if !validHost(shown) {
		shown = strconv.Quote(shown)
	}
	h.Notice(fmt.Sprintf("agent-mcp network: refused %s: %v", net.JoinHostPort(shown, strconv.Itoa(port)), err))
}

// validHost reports whether h (normalised) is an IP literal or a DNS
// name: dot-separated labels of 1 to 63 letters, digits, hyphens and
// underscores (service names such as _dmarc have them), at most 253
// characters in all.
func validHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if len(label) == 0 || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// ServeConn serves one connection from the command, HTTP or SOCKS5, and
// closes it. ctx bounds the questions asked and the connection attempts.
func (h *Handler) ServeConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 5 {
		h.socks(ctx, c, br)
		return
	}
	h.http(ctx, c, br)
}

func (h *Handler) http(ctx context.Context, c net.Conn, br *bufio.Reader) {
	req, err := http.ReadRequest(br)
	if err != nil {
		writeStatus(c, http.StatusBadRequest, "agent-mcp proxy: not an HTTP proxy request")
		return
	}
	if req.Method == http.MethodConnect {
		host, portText, err := net.SplitHostPort(req.RequestURI)
		port, perr := strconv.Atoi(portText)
		if err != nil || perr != nil || port <= 0 || port > 65535 {
			writeStatus(c, http.StatusBadRequest, "agent-mcp proxy: CONNECT needs host:port")
			return
		}
		if err := h.Inject.inName(host); err != nil {
			h.refused(host, port, err)
			writeStatus(c, http.StatusForbidden, "agent-mcp proxy: "+err.Error())
			return
		}
		up, err := h.connect(ctx, host, port)
		if err != nil {
			writeStatus(c, http.StatusForbidden, "agent-mcp proxy: "+err.Error())
			return
		}
		defer up.Close()
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		if h.terminates(host) {
			h.terminate(readerConn{c, br}, up, host, port, h.Inject.rewriter(host, h.Rules.Allowed, true))
			return
		}
		if n := br.Buffered(); n > 0 {
			b, _ := br.Peek(n)
			if _, err := up.Write(b); err != nil {
				return
			}
		}
		pipe(c, up)
		return
	}
	if req.URL == nil || req.URL.Host == "" || req.URL.Scheme != "http" {
		writeStatus(c, http.StatusBadRequest, "agent-mcp proxy: a request through the proxy names an absolute http:// URL (https goes through CONNECT)")
		return
	}
	port := 80
	if p := req.URL.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port <= 0 || port > 65535 {
			writeStatus(c, http.StatusBadRequest, "agent-mcp proxy: bad port in "+req.URL.Host)
			return
		}
	}
	if err := h.Inject.inName(req.URL.Hostname()); err != nil {
		h.refused(req.URL.Hostname(), port, err)
		writeStatus(c, http.StatusForbidden, "agent-mcp proxy: "+err.Error())
		return
	}
	up, err := h.connect(ctx, req.URL.Hostname(), port)
	if err != nil {
		writeStatus(c, http.StatusForbidden, "agent-mcp proxy: "+err.Error())
		return
	}
	defer up.Close()
	// One request per connection: a second one on a kept-alive
	// connection could go to another host unjudged.
	req.RequestURI = ""
	req.Close = true
	for k := range req.Header {
		if strings.HasPrefix(strings.ToLower(k), "proxy-") {
			req.Header.Del(k)
		}
	}
	var w io.Writer = up
	rw := h.Inject.rewriter(req.URL.Hostname(), h.Rules.Allowed, false)
	if rw != nil {
		w = &rewriteWriter{up, rw}
	}
	err = req.Write(w)
	if err == nil && rw != nil {
		err = w.(*rewriteWriter).Flush()
	}
	var es *ErrSentinel
	if errors.As(err, &es) {
		h.refused(req.URL.Hostname(), port, es)
		writeStatus(c, http.StatusForbidden, "agent-mcp proxy: "+es.Error())
		return
	}
	if err != nil {
		return
	}
	_, _ = io.Copy(c, up)
}

// connect judges and dials host:port, telling the command's output about
// a refusal.
func (h *Handler) connect(ctx context.Context, host string, port int) (net.Conn, error) {
	if isLoopback(host) {
		up, err := h.loopback(ctx, host, port)
		if err != nil {
			h.refused(host, port, err)
			return nil, err
		}
		return up, nil
	}
	addrs, err := h.decide(ctx, host, port)
	if err == nil {
		var up net.Conn
		if up, err = h.dial(ctx, addrs, port); err == nil {
			return up, nil
		}
		err = fmt.Errorf("connecting to %s: %w", normal(host), err)
	}
	h.refused(host, port, err)
	return nil, err
}

// loopback connects to host:port, host a name of the loopback: a server a
// command of this session runs there (Loopback), else the host's own
// loopback where a rule names it with the port ([Rules.NamesLoopback]),
// else nothing.
func (h *Handler) loopback(ctx context.Context, host string, port int) (net.Conn, error) {
	var why error
	if h.Loopback != nil {
		up, err := h.Loopback(ctx, port)
		if err == nil {
			return up, nil
		}
		why = err
	}
	var named []netip.Addr
	for _, a := range loopbackAddrs(host) {
		if h.Rules.NamesLoopback(a, port) {
			named = append(named, a)
		}
	}
	if len(named) > 0 {
		up, err := h.dial(ctx, named, port)
		if err != nil {
			return nil, &refusal{fmt.Sprintf("connecting to the host's %s port %d: %v", normal(host), port, err)}
		}
		return up, nil
	}
	if why != nil {
		return nil, &refusal{fmt.Sprintf("no command of this session listens on %s port %d (%v), and %s", normal(host), port, why, LoopbackAdvice(port))}
	}
	return nil, &refusal{fmt.Sprintf("%s port %d: %s", normal(host), port, LoopbackAdvice(port))}
}

// ServeForwarded serves c, a connection a command made to to (an address
// of the loopback in its own network namespace, where the sandbox's init
// listens for a port of the host's loopback a rule names,
// [Rules.LoopbackPorts]): it connects to the same address and port of the
// host and copies both ways. The rules are judged again: a port no rule
// names is refused. It closes c.
func (h *Handler) ServeForwarded(ctx context.Context, c net.Conn, to netip.AddrPort) {
	defer c.Close()
	port := int(to.Port())
	if !h.Rules.NamesLoopback(to.Addr(), port) {
		h.refused(to.Addr().String(), port, &refusal{LoopbackAdvice(port)})
		return
	}
	up, err := h.dial(ctx, []netip.Addr{to.Addr().Unmap()}, port)
	if err != nil {
		h.refused(to.Addr().String(), port, fmt.Errorf("connecting to the host's %s: %w", to, err))
		return
	}
	defer up.Close()
	pipe(c, up)
}

// loopbackAddrs are the addresses of the host's loopback that host (a
// name isLoopback accepts) names: 127.0.0.1 then ::1 for localhost, the
// address itself for a literal, none for a name below localhost.
func loopbackAddrs(host string) []netip.Addr {
	h := normal(host)
	if h == "localhost" {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Zone() == "" {
		return []netip.Addr{a.Unmap()}
	}
	return nil
}

// SOCKS5 (RFC 1928) replies.
const (
	socksOK          = 0
	socksNotAllowed  = 2
	socksRefused     = 5
	socksUnsupported = 7
	socksBadAddress  = 8
)

func (h *Handler) socks(ctx context.Context, c net.Conn, br *bufio.Reader) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	if !strings.ContainsRune(string(methods), 0) {
		_, _ = c.Write([]byte{5, 0xff})
		return
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != 5 {
		return
	}
	var host string
	switch req[3] {
	case 1, 4:
		b := make([]byte, 4)
		if req[3] == 4 {
			b = make([]byte, 16)
		}
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		host = string(b)
	default:
		socksReply(c, socksBadAddress)
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(pb[:]))
	if req[1] != 1 {
		// BIND and UDP ASSOCIATE: only streams go through the proxy.
		h.refused(host, port, &refusal{"only SOCKS5 CONNECT is served (no UDP, no BIND)"})
		socksReply(c, socksUnsupported)
		return
	}
	if err := h.Inject.inName(host); err != nil {
		h.refused(host, port, err)
		socksReply(c, socksNotAllowed)
		return
	}
	up, err := h.connect(ctx, host, port)
	if err != nil {
		code := byte(socksRefused)
		var r *refusal
		if errors.As(err, &r) {
			code = socksNotAllowed
		}
		socksReply(c, code)
		return
	}
	defer up.Close()
	socksReply(c, socksOK)
	if h.terminates(host) {
		h.terminate(readerConn{c, br}, up, host, port, h.Inject.rewriter(host, h.Rules.Allowed, true))
		return
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	pipe(c, up)
}

func socksReply(c net.Conn, code byte) {
	_, _ = c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
}

func writeStatus(c net.Conn, code int, msg string) {
	msg += "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(msg), msg)
}

// pipe copies both ways until both sides are done; a side that ends
// half-closes the other (so a request's end reaches the server).
func pipe(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(b, a)
		closeWrite(b)
		close(done)
	}()
	_, _ = io.Copy(a, b)
	closeWrite(a)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// isLoopback reports whether host names the loopback: localhost, or an
// address of 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	h := normal(host)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox/egress"
	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// NetMode is what a sandboxed command's network is (settings'
// sandbox.network).
type NetMode string

// Network modes.
const (
	// NetProxy (the default): the command's connections go only through
	// the egress proxy, which admits a host by rule or by the user's
	// answer. Needs the namespaces layer; with Landlock alone the
	// network is off instead.
	NetProxy NetMode = "proxy"
	// NetOn leaves the network as it is (sandbox.network true).
	NetOn NetMode = "on"
	// NetOff leaves only a private loopback (sandbox.network false).
	NetOff NetMode = "off"
)

// HostsEnv is the variable that, when set, maps names to addresses ahead
// of DNS in the egress proxy ("name=address,name=address"): a test and
// diagnostic hook, as /etc/hosts is for the machine. The addresses are
// checked as resolved ones are (a loopback one needs a rule naming it).
// internal/cli reads it into [Options.Hosts].
const HostsEnv = "AGENT_MCP_EGRESS_HOSTS"

// ParseHosts reads [HostsEnv]'s value: "name=address" pairs separated by
// commas or spaces.
func ParseHosts(v string) (map[string]netip.Addr, error) {
	out := map[string]netip.Addr{}
	for _, kv := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		name, addr, ok := strings.Cut(kv, "=")
		a, err := netip.ParseAddr(addr)
		if !ok || name == "" || err != nil {
			return nil, fmt.Errorf("%s: %q is not name=address", HostsEnv, kv)
		}
		out[strings.ToLower(name)] = a.Unmap()
	}
	return out, nil
}

// net is the network mode commands get: proxy needs the namespaces
// layer, or Landlock (ABI 4+) with the seccomp supervisor
// (supervise_linux.go); without them it is off.
func (s *Sandbox) net() NetMode {
	switch {
	case s.opts.Network == NetOn:
		return NetOn
	case s.opts.Network == NetOff:
		return NetOff
	case s.layers.Namespaces:
		return NetProxy
	case s.layers.Landlock >= 4 && s.support.SupervisorErr == nil:
		return NetProxy
	}
	return NetOff
}

// Network is the network mode commands run with: the configured one,
// except that the proxy needs the namespaces layer or Landlock with the
// seccomp supervisor (without them the network is off). [NetOn] for a
// nil Sandbox. Where Landlock settles the answer (the usual case: the
// mode is configured, or the supervisor can hold the proxy) it does not
// wait for the namespaces probe, so that the Bash tool's description,
// made before the probe has run, says the network policy; otherwise it
// waits for the probe.
func (s *Sandbox) Network() NetMode {
	if s == nil {
		return NetOn
	}
	if m, ok := s.netBeforeProbe(); ok {
		return m
	}
	if !s.Layers().Any() {
		return NetOn
	}
	return s.net()
}

// netBeforeProbe is the network mode when Landlock alone decides it, known
// from New on: with Landlock the sandbox confines whatever the probe
// finds, and the proxy holds either way once the supervisor can hold it.
func (s *Sandbox) netBeforeProbe() (NetMode, bool) {
	if s.landlock == 0 {
		return "", false
	}
	switch {
	case s.opts.Network == NetOn:
		return NetOn, true
	case s.opts.Network == NetOff:
		return NetOff, true
	case s.landlock >= 4 && s.supervisorErr == nil:
		return NetProxy, true
	}
	return "", false
}

// NetworkNote says how the network mode holds with the layers in use:
// the proxy through the supervisor with Landlock alone, or why the
// network is off instead of proxied. Empty when there is nothing to add.
func (s *Sandbox) NetworkNote() string {
	if s == nil || !s.layers.Any() || s.layers.Namespaces {
		return ""
	}
	switch s.net() {
	case NetProxy:
		return "Landlock alone: a seccomp supervisor makes every TCP socket of a command, connected to the proxy, and refuses any other connection"
	case NetOff:
		if s.opts.Network != NetOff {
			return fmt.Sprintf("the egress proxy with Landlock alone needs Landlock ABI 4+, seccomp user notification with SECCOMP_IOCTL_NOTIF_ADDFD (Linux 5.9+) and pidfd_getfd (5.6+): %v", s.support.SupervisorErr)
		}
	}
	return ""
}

// supervisedProxy is the egress proxy's listener with Landlock alone,
// made on first use.
func (s *Sandbox) supervisedProxy() (*supervisedProxy, error) {
	s.proxyOnce.Do(func() { s.proxy, s.proxyErr = newSupervisedProxy() })
	return s.proxy, s.proxyErr
}

// EgressRules are the domain rules the egress proxy judges hosts by.
func (s *Sandbox) EgressRules() egress.Rules {
	if s == nil {
		return egress.Rules{}
	}
	return egress.Rules{Allowed: s.opts.AllowedDomains, Denied: s.opts.DeniedDomains}
}

// EgressHosts is the [Options.Hosts] map the proxy resolves with first.
func (s *Sandbox) EgressHosts() map[string]netip.Addr {
	if s == nil {
		return nil
	}
	return s.opts.Hosts
}

// proxyEnv points a command's proxy variables at 127.0.0.1:port (the
// relay init runs in its namespace, or the supervised proxy's listener),
// HTTP and SOCKS5 alike (the proxy tells them apart).
func proxyEnv(port int) []string {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	http := "http://" + addr
	socks := "socks5h://" + addr
	// NO_PROXY is emptied: a connection to localhost goes through the
	// proxy too, which reaches the command's own loopback or, failing
	// that, a server another command of the session runs.
	return []string{
		"HTTP_PROXY=" + http, "http_proxy=" + http,
		"HTTPS_PROXY=" + http, "https_proxy=" + http,
		"ALL_PROXY=" + socks, "all_proxy=" + socks,
		"NO_PROXY=", "no_proxy=",
	}
}

// egressPair is the connected pair of sequenced-packet unix sockets over
// which init hands the server the proxy's connections: the first end is
// init's, the second the server's.
func egressPair() (initEnd, serverEnd *os.File, err error) {
	return socketPair(syscall.SOCK_SEQPACKET, "egress-init", "egress-server")
}

// relay is the server's end of the socket pair shared with a proxied
// command's init (launcher.Plan.ProxyFD): it serves the connections init
// hands over, and asks init to connect to its namespace's loopback.
type relay struct {
	conn    *net.UnixConn
	h       *egress.Handler
	dialMu  sync.Mutex    // one loopback dial at a time
	dialed  chan dialed   // init's answer to a dial
	live    atomic.Int32  // connections being served (maxProxyConns)
	done    chan struct{} // closed when init's end is gone
	closeMu sync.Once
}

// maxProxyConns bounds the connections to the egress proxy one command
// holds at once: each is a descriptor of the server's (handed over by the
// relay, or with Landlock alone a socket the supervisor made, which also
// holds a port of the host's loopback), so without a bound one command
// could use up the server's descriptors and fail every other command.
// Past it the relay closes a new connection at once, and the supervisor
// fails socket(2) with EMFILE.
const maxProxyConns = 1024

// newRelay wraps the server's end of the pair.
func newRelay(ctl *os.File, h *egress.Handler) (*relay, error) {
	c, err := net.FileConn(ctl)
	ctl.Close()
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("the egress socket is a %T", c)
	}
	return &relay{conn: uc, h: h, dialed: make(chan dialed, 1), done: make(chan struct{})}, nil
}

// dialed is init's answer to a dial: the port, and the connection or nil.
type dialed struct {
	port int
	f    *os.File
}

// serveConn serves conn with serve while the command's connections stay
// within maxProxyConns; past it conn is closed at once.
func (r *relay) serveConn(conn net.Conn, serve func(net.Conn)) {
	if r.live.Add(1) > maxProxyConns {
		r.live.Add(-1)
		conn.Close()
		return
	}
	go func() {
		defer r.live.Add(-1)
		serve(conn)
	}()
}

// serve receives what init sends until its end is gone.
func (r *relay) serve() {
	defer r.closeMu.Do(func() { close(r.done) })
	defer r.conn.Close()
	buf := make([]byte, 4)
	oob := make([]byte, rightsSpace(4))
	for {
		n, oobn, _, _, err := r.conn.ReadMsgUnix(buf, oob)
		if err != nil || (n == 0 && oobn == 0) {
			return
		}
		files := receivedFiles(oob[:oobn], "egress-conn")
		switch {
		case n == 1 && buf[0] == launcher.RelayAccepted:
			r.serveFiles(files, func(c net.Conn) { r.h.ServeConn(context.Background(), c) })
		case n == 4 && buf[0] == launcher.RelayForwarded && (buf[1] == 4 || buf[1] == 6):
			to := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(buf[2])<<8|uint16(buf[3]))
			if buf[1] == 6 {
				to = netip.AddrPortFrom(netip.IPv6Loopback(), to.Port())
			}
			r.serveFiles(files, func(c net.Conn) { r.h.ServeForwarded(context.Background(), c, to) })
		case n == 3 && buf[0] == launcher.RelayDialed:
			r.answered(int(buf[1])<<8|int(buf[2]), files)
		default:
			for _, f := range files {
				f.Close()
			}
		}
	}
}

// serveFiles serves each of files, connections init handed over, with
// serve.
func (r *relay) serveFiles(files []*os.File, serve func(net.Conn)) {
	for _, f := range files {
		conn, err := net.FileConn(f)
		f.Close()
		if err == nil {
			r.serveConn(conn, serve)
		}
	}
}

// answered passes init's answer to a dial of port (the connection, the
// first of files, or none) to the dial waiting for it.
func (r *relay) answered(port int, files []*os.File) {
	d := dialed{port: port}
	if len(files) > 0 {
		d.f, files = files[0], files[1:]
	}
	for _, x := range files {
		x.Close()
	}
	select {
	case r.dialed <- d:
	default:
		// An answer nobody took is there already (its dial gave up):
		// this one is not waited for either.
		if d.f != nil {
			d.f.Close()
		}
	}
}

// dialLoopback asks init to connect to 127.0.0.1:port in the command's
// namespace.
func (r *relay) dialLoopback(ctx context.Context, port int) (net.Conn, error) {
	r.dialMu.Lock()
	defer r.dialMu.Unlock()
	// The answer channel holds one answer, so that one arriving before
	// this dial waits for it is kept (it was lost before: the dial then
	// waited ten seconds in vain); an earlier dial's late answer is
	// dropped here, or below by its port.
	r.drop()
	msg := []byte{launcher.RelayDial, byte(port >> 8), byte(port)}
	if _, _, err := r.conn.WriteMsgUnix(msg, nil, nil); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		select {
		case d := <-r.dialed:
			if d.port != port {
				if d.f != nil {
					d.f.Close()
				}
				continue
			}
			if d.f == nil {
				return nil, fmt.Errorf("nothing listens on port %d there", port)
			}
			defer d.f.Close()
			return net.FileConn(d.f)
		case <-r.done:
			return nil, errors.New("the command has ended")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// drop discards an answer to an earlier dial that nobody took.
func (r *relay) drop() {
	select {
	case d := <-r.dialed:
		if d.f != nil {
			d.f.Close()
		}
	default:
	}
}

// Alive reports whether the launch's proxied command is still running
// (its init holds the relay's other end).
func (l *Launch) Alive() bool {
	if l.relay == nil {
		return false
	}
	select {
	case <-l.relay.done:
		return false
	default:
		return true
	}
}

// DialLoopback connects to 127.0.0.1:port inside the command's own
// network namespace, through its init: how a connection of another
// command of the session reaches a server this one runs. Only for a
// command whose network goes through the egress proxy.
func (l *Launch) DialLoopback(ctx context.Context, port int) (net.Conn, error) {
	if l.relay == nil {
		return nil, errors.New("the command has no network namespace of its own")
	}
	return l.relay.dialLoopback(ctx, port)
}

// HoldsNetwork reports whether a command's connections are held: the
// network is off, or goes through the egress proxy.
func (s *Sandbox) HoldsNetwork() bool { return s != nil && s.layers.Any() && s.net() != NetOn }

// RootsEnv is the variable that, when set, names a PEM file of further
// root certificates the egress proxy trusts when, having terminated a
// command's TLS, it connects to the host itself: a test and diagnostic
// hook (a test server with its own CA), read by internal/cli into
// [Options.UpstreamRoots] beside the system's roots. It is the server's
// environment, out of a command's reach.
const RootsEnv = "AGENT_MCP_EGRESS_ROOTS"

package egress

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"time"
)

// Secret is one masked credential: the command sees Sentinel, a value
// of Real's length and alphabet; the proxy puts Real in its place in
// requests to Hosts only.
type Secret struct {
	// Name says where the value came from: a variable's name, a file's
	// path.
	Name string
	// Real is the value; Sentinel what the command has instead.
	Real, Sentinel string
	// Hosts are the hosts the value is injected toward (sandbox.network
	// domain patterns); empty means every allowed domain
	// ([Rules.Allowed]).
	Hosts []string
}

// Inject is how the proxy handles a session's masked credentials.
type Inject struct {
	// Secrets are the session's masked credentials.
	Secrets []Secret
	// CA terminates TLS toward the hosts a secret is injected for (and
	// toward every host with TerminateAll); nil terminates nothing.
	CA *CA
	// Plaintext lets a secret be injected into a plain http:// request
	// (sandbox.credentials.allowPlaintextInject); otherwise a sentinel
	// in one is refused.
	Plaintext bool
	// TerminateAll terminates TLS toward every host, not only those a
	// secret is injected for, so that a sentinel sent anywhere is seen
	// and refused (sandbox.network.tlsTerminate).
	TerminateAll bool
	// Roots verify the hosts reached after termination; nil means the
	// system's roots.
	Roots *x509.CertPool
}

// ErrSentinel is a sentinel found in a request to a host its secret is
// not injected toward: the request is refused.
type ErrSentinel struct {
	// Name is the secret's name; Hosts where it may go.
	Name  string
	Hosts []string
	// Plain: the host is an inject host, but the request is plain HTTP.
	Plain bool
}

func (e *ErrSentinel) Error() string {
	if e.Plain {
		return fmt.Sprintf("the request carries the sentinel of the masked credential %s over plain HTTP; it is injected only over HTTPS (sandbox.credentials.allowPlaintextInject allows plain HTTP)", e.Name)
	}
	where := "the allowed domains"
	if len(e.Hosts) > 0 {
		where = strings.Join(e.Hosts, ", ")
	}
	return fmt.Sprintf("the request carries the sentinel of the masked credential %s, which is injected only toward %s: refused as an attempt to send the credential elsewhere (to allow it, add the host to injectHosts of its sandbox.credentials entry)", e.Name, where)
}

// hostsOf are the hosts s is injected toward.
func (in *Inject) hostsOf(s Secret, allowed []string) []string {
	if len(s.Hosts) > 0 {
		return s.Hosts
	}
	return allowed
}

// injects reports whether a secret is injected toward host.
func (in *Inject) injects(host string, allowed []string) bool {
	if in == nil {
		return false
	}
	for _, s := range in.Secrets {
		for _, p := range in.hostsOf(s, allowed) {
			if Match(p, host) {
				return true
			}
		}
	}
	return false
}

// rewriter is the substitution for a request to host: the secrets
// injected toward it are replaced (when replace is true: over TLS, or
// plain HTTP with Plaintext), the others' sentinels refused.
func (in *Inject) rewriter(host string, allowed []string, tlsd bool) *rewriter {
	if in == nil || len(in.Secrets) == 0 {
		return nil
	}
	rw := &rewriter{}
	for _, s := range in.Secrets {
		hosts := in.hostsOf(s, allowed)
		ok := false
		for _, p := range hosts {
			ok = ok || Match(p, host)
		}
		r := rule{from: []byte(s.Sentinel), to: []byte(s.Real), err: &ErrSentinel{Name: s.Name, Hosts: hosts}}
		switch {
		case ok && (tlsd || in.Plaintext):
			r.err = nil
		case ok:
			r.err.Plain = true
		}
		rw.rules = append(rw.rules, r)
		rw.max = max(rw.max, len(r.from))
	}
	return rw
}

// inName reports the secret whose sentinel a host name carries (case
// does not matter in a name): a command spelling it into a DNS name.
func (in *Inject) inName(host string) error {
	if in == nil {
		return nil
	}
	// A name's labels are at most 63 bytes: a longer sentinel is split
	// over several, so the dots go before the search.
	h := strings.ReplaceAll(strings.ToLower(host), ".", "")
	for _, s := range in.Secrets {
		core := strings.ToLower(s.Sentinel)
		if i := strings.LastIndexAny(core[:min(len(core), 12)], "_-"); i >= 0 && len(core)-i-1 >= 12 {
			core = core[i+1:]
		}
		if len(core) >= 8 && strings.Contains(h, core) {
			return &ErrSentinel{Name: s.Name, Hosts: s.Hosts}
		}
	}
	return nil
}

// rule is one sentinel: replaced by to, or refused with err.
type rule struct {
	from, to []byte
	err      *ErrSentinel
}

// rewriter replaces sentinels in a stream, as it passes, holding back
// only a tail that could be the start of one. Every replacement keeps the
// length, so a Content-Length stays right.
type rewriter struct {
	rules   []rule
	max     int
	pending []byte
}

// feed takes the next bytes of the stream and returns those that can go
// on (rewritten), or the refusal.
func (r *rewriter) feed(p []byte) ([]byte, error) {
	data := append(r.pending, p...)
	r.pending = nil
	for i := 0; i < len(data); {
		at, which := -1, -1
		for k, ru := range r.rules {
			if j := bytes.Index(data[i:], ru.from); j >= 0 && (at < 0 || j < at) {
				at, which = j, k
			}
		}
		if at < 0 {
			break
		}
		ru := r.rules[which]
		if ru.err != nil {
			return nil, ru.err
		}
		copy(data[i+at:], ru.to)
		i += at + len(ru.from)
	}
	hold := 0
	for k := min(r.max-1, len(data)); k > 0 && hold == 0; k-- {
		tail := data[len(data)-k:]
		for _, ru := range r.rules {
			if bytes.HasPrefix(ru.from, tail) {
				hold = k
				break
			}
		}
	}
	r.pending = append([]byte(nil), data[len(data)-hold:]...)
	return data[:len(data)-hold], nil
}

// flush returns what is held back.
func (r *rewriter) flush() []byte {
	p := r.pending
	r.pending = nil
	return p
}

// rewriteWriter passes what is written through a rewriter.
type rewriteWriter struct {
	w  io.Writer
	rw *rewriter
}

func (w *rewriteWriter) Write(p []byte) (int, error) {
	out, err := w.rw.feed(p)
	if err != nil {
		return 0, err
	}
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what the rewriter held back.
func (w *rewriteWriter) Flush() error {
	_, err := w.w.Write(w.rw.flush())
	return err
}

// flushDelay is how long a held-back tail waits for the rest of a
// possible sentinel before it goes on as it is: a request that ends with
// the first bytes of one must not wait for more that never comes.
const flushDelay = 20 * time.Millisecond

// copyRewritten copies src to dst through rw until src ends.
func copyRewritten(dst io.Writer, src net.Conn, rw *rewriter) error {
	buf := make([]byte, 32<<10)
	w := &rewriteWriter{dst, rw}
	defer src.SetReadDeadline(time.Time{})
	for {
		if len(rw.pending) > 0 {
			_ = src.SetReadDeadline(time.Now().Add(flushDelay))
		} else {
			_ = src.SetReadDeadline(time.Time{})
		}
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if ferr := w.Flush(); ferr != nil {
					return ferr
				}
				continue
			}
			if ferr := w.Flush(); ferr != nil {
				return ferr
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// Sentinel makes a stand-in for real: the same length, each letter and
// digit replaced by a random one of its kind (from the hexadecimal
// digits alone when real is written in them), every other character
// kept, and a leading prefix such as "ghp_" or "sk-" kept where enough
// follows it, so that a client that checks a token's form accepts it.
func Sentinel(real string) string {
	b := []byte(real)
	keep := 0
	if i := strings.LastIndexAny(real[:min(len(real), 12)], "_-"); i >= 0 && len(real)-i-1 >= 16 {
		keep = i + 1
	}
	var lower, upper, other bool // which letters real holds beyond a-f / A-F
	for _, c := range b[keep:] {
		switch {
		case c >= 'a' && c <= 'f':
			lower = true
		case c >= 'A' && c <= 'F':
			upper = true
		case c >= 'g' && c <= 'z', c >= 'G' && c <= 'Z':
			other = true
		}
	}
	lowerHex, upperHex := lower && !upper && !other, upper && !lower && !other
	for {
		for i := keep; i < len(b); i++ {
			c := real[i]
			digit, low, up := c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z'
			switch {
			case (digit || low) && lowerHex:
				b[i] = pick("0123456789abcdef")
			case (digit || up) && upperHex:
				b[i] = pick("0123456789ABCDEF")
			case digit:
				b[i] = pick("0123456789")
			case low:
				b[i] = pick("abcdefghijklmnopqrstuvwxyz")
			case up:
				b[i] = pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
			}
		}
		if string(b) != real || keep == len(b) {
			return string(b)
		}
	}
}

func pick(alphabet string) byte {
	n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
	return alphabet[n.Int64()]
}

// terminates reports whether the proxy terminates TLS toward host: a
// secret is injected toward it, or every host is terminated. The
// session's own loopback never is.
func (h *Handler) terminates(host string) bool {
	in := h.Inject
	return in != nil && in.CA != nil && !isLoopback(host) && (in.TerminateAll || in.injects(host, h.Rules.Allowed))
}

// readerConn is a connection whose reads come through r first (what a
// bufio.Reader already took of it).
type readerConn struct {
	net.Conn
	r io.Reader
}

func (c readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// terminate serves a CONNECT to host whose TLS the proxy terminates: it
// answers the command's handshake with a leaf of the CA, makes its own to
// the host (verified against in.Roots), and copies the requests through
// rw (sentinels replaced or refused) and the answers back.
func (h *Handler) terminate(c net.Conn, up net.Conn, host string, port int, rw *rewriter) {
	in := h.Inject
	srv := tls.Server(c, &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return in.CA.Leaf(host)
		},
	})
	defer srv.Close()
	_ = srv.SetDeadline(time.Now().Add(30 * time.Second))
	if err := srv.Handshake(); err != nil {
		return
	}
	_ = srv.SetDeadline(time.Time{})
	cli := tls.Client(up, &tls.Config{MinVersion: tls.VersionTLS12, ServerName: normal(host), RootCAs: in.Roots, NextProtos: []string{"http/1.1"}})
	defer cli.Close()
	_ = cli.SetDeadline(time.Now().Add(30 * time.Second))
	if err := cli.Handshake(); err != nil {
		err = fmt.Errorf("the TLS handshake with %s failed: %w", normal(host), err)
		h.refused(host, port, err)
		writeStatus(srv, 502, "agent-mcp proxy: "+err.Error())
		return
	}
	_ = cli.SetDeadline(time.Time{})
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(srv, cli)
		_ = srv.CloseWrite()
		close(done)
	}()
	if rw == nil {
		rw = &rewriter{}
	}
	err := copyRewritten(cli, srv, rw)
	var es *ErrSentinel
	if errors.As(err, &es) {
		h.refused(host, port, es)
		writeStatus(srv, 403, "agent-mcp proxy: "+es.Error())
		cli.Close()
		srv.Close()
		<-done
		return
	}
	_ = cli.CloseWrite()
	<-done
}

package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestMatchAndJudge(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern, host string
		want          bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "EXAMPLE.com.", true},
		{"example.com", "www.example.com", false},
		{"*.example.com", "www.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "badexample.com", false},
		{"1.2.3.4", "1.2.3.4", true},
		{"*.2.3.4", "1.2.3.4", false},
		{"::1", "[::1]", true},
		{"example.com", "1.2.3.4", false},
	} {
		if got := Match(tt.pattern, tt.host); got != tt.want {
			t.Errorf("Match(%q, %q) = %v", tt.pattern, tt.host, got)
		}
	}
	r := Rules{Allowed: []string{"*.example.com"}, Denied: []string{"evil.example.com"}}
	for host, want := range map[string]Verdict{"www.example.com": Allowed, "evil.example.com": Denied, "other.org": Unlisted} {
		if got, _ := r.Judge(host); got != want {
			t.Errorf("Judge(%q) = %v, want %v", host, got, want)
		}
	}
	for _, bad := range []string{"", "*.", "http://x.com", "x.com/path", "a*b.com"} {
		if err := CheckPattern("sandbox.network.allowedDomains", bad); err == nil || !strings.Contains(err.Error(), "sandbox.network.allowedDomains") {
			t.Errorf("CheckPattern(%q) = %v", bad, err)
		}
	}
}

// upstream is a TCP server on 127.0.0.1 that answers every connection
// with a line naming what it read first.
func upstream(t *testing.T) (port int, hits *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	hits = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "HTTP/1.0 200 OK\r\n\r\ngot %s", line)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, hits
}

// serve runs h on one end of a pipe-like loopback pair and returns the
// client end.
func serve(t *testing.T, h *Handler) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		close(accepted)
		if err == nil {
			h.ServeConn(context.Background(), c)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// The listener is closed only once the connection is accepted: closed
	// before, it resets the connection still in its queue.
	<-accepted
	t.Cleanup(func() { c.Close() })
	return c
}

// proxyFixture is a handler under test, its upstream, and what it asked
// and told the user.
type proxyFixture struct {
	t     *testing.T
	port  int
	hosts map[string]netip.Addr
	h     *Handler

	mu                 sync.Mutex
	notices, questions []string
}

// newProxyFixture starts the upstream and resolves the test's names to
// the loopback.
func newProxyFixture(t *testing.T) (*proxyFixture, *atomic.Int64) {
	port, hits := upstream(t)
	f := &proxyFixture{t: t, port: port, hosts: map[string]netip.Addr{}}
	for _, h := range []string{"ok.test", "ask.test", "no.test", "deny.test", "private.test"} {
		f.hosts[h] = netip.MustParseAddr("127.0.0.1")
	}
	return f, hits
}

// handler is the handler of one command with the session's grants: the
// user allows ask.test for the session and refuses no.test.
func (f *proxyFixture) handler(grants *Grants) *Handler {
	return &Handler{
		Rules:   Rules{Allowed: []string{"ok.test", "127.0.0.1", "private.test"}, Denied: []string{"deny.test"}},
		Session: grants, Hosts: f.hosts,
		Ask: func(_ context.Context, host string, port int) (Answer, error) {
			f.mu.Lock()
			f.questions = append(f.questions, host+":"+strconv.Itoa(port))
			f.mu.Unlock()
			switch host {
			case "ask.test":
				return AllowSession, nil
			case "no.test":
				return Refuse, nil
			}
			return Refuse, errors.New("unexpected")
		},
		Notice: func(l string) { f.mu.Lock(); f.notices = append(f.notices, l); f.mu.Unlock() },
	}
}

// connect asks f.h for host with CONNECT and returns what the upstream
// echoed, or the proxy's refusal.
func (f *proxyFixture) connect(host string) string {
	t := f.t
	c := serve(t, f.h)
	fmt.Fprintf(c, "CONNECT %s:%d HTTP/1.1\r\nHost: %s\r\n\r\n", host, f.port, host)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("CONNECT %s: reading the proxy's answer: %v", host, err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	fmt.Fprintf(c, "hello %s\n", host)
	rest, _ := io.ReadAll(br)
	return string(rest)
}

// socks asks f.h for host with SOCKS5 and returns its reply code, having
// checked the upstream's echo where the connection was made.
func (f *proxyFixture) socks(host string) byte {
	t := f.t
	c := serve(t, f.h)
	_, _ = c.Write([]byte{5, 1, 0})
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("SOCKS5 greeting: %v %v", m, err)
	}
	req := append([]byte{5, 1, 0, 3, byte(len(host))}, host...)
	req = append(req, byte(f.port>>8), byte(f.port))
	_, _ = c.Write(req)
	var rep [10]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatal(err)
	}
	if rep[1] == 0 {
		fmt.Fprintf(c, "hello socks\n")
		if b, _ := io.ReadAll(c); !strings.Contains(string(b), "got hello socks") {
			t.Errorf("SOCKS5 to %s: %q", host, b)
		}
	}
	return rep[1]
}

func TestHandler_protocolsAndDecisions(t *testing.T) {
	t.Parallel()
	f, hits := newProxyFixture(t)
	p := strconv.Itoa(f.port)
	grants := &Grants{}
	f.h = f.handler(grants)
	connect, socks := f.connect, f.socks
	if got := connect("ok.test"); !strings.Contains(got, "got hello ok.test") {
		t.Errorf("CONNECT to an allowed host: %q", got)
	}
	if got := connect("deny.test"); !strings.HasPrefix(got, "403") || !strings.Contains(got, `deny rule "deny.test"`) {
		t.Errorf("CONNECT to a denied host: %q", got)
	}
	if got := connect("no.test"); !strings.HasPrefix(got, "403") || !strings.Contains(got, "WebFetch(domain:no.test)") {
		t.Errorf("CONNECT to a host the user refused: %q", got)
	}
	if got := connect("ask.test"); !strings.Contains(got, "got hello ask.test") {
		t.Errorf("CONNECT to a host the user allowed: %q", got)
	}
	// The session's answer holds for the next command, without a question.
	f.h = f.handler(grants)
	if got := connect("ask.test"); !strings.Contains(got, "got hello ask.test") {
		t.Errorf("CONNECT to a host allowed for the session: %q", got)
	}
	f.mu.Lock()
	if strings.Count(strings.Join(f.questions, ","), "ask.test") != 1 || strings.Contains(strings.Join(f.questions, ","), "deny.test") {
		t.Errorf("questions asked: %v", f.questions)
	}
	f.mu.Unlock()

	// A resolved loopback address needs a rule naming the address.
	f.h = &Handler{Rules: Rules{Allowed: []string{"ok.test"}}, Hosts: f.hosts}
	if got := connect("ok.test"); !strings.Contains(got, "not a public address") {
		t.Errorf("CONNECT to a name resolving to loopback without a rule naming it: %q", got)
	}

	// Plain HTTP in absolute form.
	f.h = f.handler(nil)
	c := serve(t, f.h)
	fmt.Fprintf(c, "GET http://ok.test:%s/x HTTP/1.1\r\nHost: ok.test\r\nProxy-Authorization: x\r\n\r\n", p)
	if b, _ := io.ReadAll(c); !strings.Contains(string(b), "got GET /x HTTP/1.1") {
		t.Errorf("absolute-form GET: %q", b)
	}

	// SOCKS5 with a name, and a refusal.
	if code := socks("ok.test"); code != socksOK {
		t.Errorf("SOCKS5 to an allowed host: reply %d", code)
	}
	if code := socks("deny.test"); code != socksNotAllowed {
		t.Errorf("SOCKS5 to a denied host: reply %d", code)
	}
	// A SOCKS5 name is raw bytes: one that is no host name is refused
	// without a question (it would carry a second line, or a terminal's
	// control sequences, into it), and the notice quotes it.
	for _, bad := range []string{"evil.test\nAllow everything? yes", "a\x1b]52;c;aGk=\x07.test", "a..test", "-\x00.test"} {
		if code := socks(bad); code != socksNotAllowed {
			t.Errorf("SOCKS5 to %q: reply %d", bad, code)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.questions {
		if strings.ContainsAny(q, "\n\x1b\x00") || strings.Contains(q, "..") {
			t.Errorf("a name that is no host name was put to the user: %q", q)
		}
	}
	for _, n := range f.notices {
		if strings.ContainsAny(n, "\n\x1b\x00") {
			t.Errorf("a notice carries a control character: %q", n)
		}
	}
	if len(f.notices) < 3 || !strings.Contains(strings.Join(f.notices, "\n"), "refused deny.test:"+p) {
		t.Errorf("notices: %q", f.notices)
	}
	if hits.Load() < 5 {
		t.Errorf("upstream connections: %d", hits.Load())
	}
}

// TestHandler_questionsStopAfterRefusals: once MaxRefusedQuestions of a
// command's questions were not allowed (answered no, or failed), its
// further unlisted hosts are refused without a question, saying why; a
// host it was already answered about, and the next command, are as before.
func TestHandler_questionsStopAfterRefusals(t *testing.T) {
	t.Parallel()
	port, _ := upstream(t)
	hosts := map[string]netip.Addr{}
	for i := range 10 {
		hosts[fmt.Sprintf("h%d.test", i)] = netip.MustParseAddr("127.0.0.1")
	}
	var asked atomic.Int32
	newHandler := func() *Handler {
		return &Handler{
			Rules: Rules{Allowed: []string{"127.0.0.1"}}, Hosts: hosts,
			Ask: func(_ context.Context, host string, _ int) (Answer, error) {
				asked.Add(1)
				if host == "h1.test" {
					return Refuse, errors.New("the client did not answer")
				}
				return Refuse, nil
			},
		}
	}
	connect := func(h *Handler, host string) string {
		c := serve(t, h)
		fmt.Fprintf(c, "CONNECT %s:%d HTTP/1.1\r\nHost: %s\r\n\r\n", host, port, host)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("CONNECT %s: %v", host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	h := newHandler()
	for i := range 10 {
		got := connect(h, fmt.Sprintf("h%d.test", i))
		if !strings.HasPrefix(got, "403") {
			t.Errorf("h%d.test: %q, want a refusal", i, got)
		}
		if i >= MaxRefusedQuestions && !strings.Contains(got, "the user was not asked") {
			t.Errorf("h%d.test after %d unallowed questions: %q, want it to say the user was not asked", i, MaxRefusedQuestions, got)
		}
	}
	if n := asked.Load(); n != MaxRefusedQuestions {
		t.Errorf("%d questions for 10 unlisted hosts, want %d", n, MaxRefusedQuestions)
	}
	if got := connect(h, "h0.test"); !strings.Contains(got, "the user refused") {
		t.Errorf("a host already refused: %q, want the user's answer", got)
	}
	if connect(newHandler(), "h9.test"); asked.Load() != MaxRefusedQuestions+1 {
		t.Errorf("the next command's first unlisted host was not asked about")
	}
}

func TestRules_hostLoopback(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"localhost:5000-6000", "localhost:*", "localhost:0", "localhost:65536", "localhost:05432", "example.com:443", "10.0.0.1:22", "[::1]:x"} {
		if err := CheckPattern("sandbox.network.allowedDomains", bad); err == nil || !strings.Contains(err.Error(), "sandbox.network.allowedDomains") {
			t.Errorf("CheckPattern(%q) = %v, want an error naming the setting", bad, err)
		}
	}
	for _, good := range []string{"localhost", "localhost:5432", "127.0.0.1:5432", "[::1]:5432", "::1", "LOCALHOST:80"} {
		if err := CheckPattern("sandbox.network.allowedDomains", good); err != nil {
			t.Errorf("CheckPattern(%q) = %v", good, err)
		}
	}
	v4, v6, other := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.2")
	r := Rules{Allowed: []string{"localhost:5432", "[::1]:6379", "127.0.0.1:8080", "example.com"}, Denied: []string{"localhost:8080"}}
	for _, tt := range []struct {
		a    netip.Addr
		port int
		want bool
	}{
		{v4, 5432, true}, {v6, 5432, true}, {netip.MustParseAddr("::ffff:127.0.0.1"), 5432, true},
		{v4, 5433, false}, {other, 5432, false},
		{v6, 6379, true}, {v4, 6379, false},
		{v4, 8080, false}, // denied
	} {
		if got := r.NamesLoopback(tt.a, tt.port); got != tt.want {
			t.Errorf("NamesLoopback(%s, %d) = %v", tt.a, tt.port, got)
		}
	}
	if got := fmt.Sprint(r.LoopbackPorts()); got != "[127.0.0.1:5432 [::1]:5432 [::1]:6379]" {
		t.Errorf("LoopbackPorts() = %s", got)
	}
	all := Rules{Allowed: []string{"localhost"}}
	if !all.NamesLoopback(v4, 1) || !all.NamesLoopback(v6, 65535) || all.NamesLoopback(other, 1) || len(all.LoopbackPorts()) != 0 {
		t.Errorf("localhost without a port: %v %v", all.NamesLoopback(v4, 1), all.LoopbackPorts())
	}
}

// TestHandler_hostLoopback: a connection to the loopback goes to a server
// of the session first, else to the host's loopback where a rule names
// the port, else is refused naming the setting.
func TestHandler_hostLoopback(t *testing.T) {
	t.Parallel()
	port, _ := upstream(t)
	other, _ := upstream(t)
	var notices []string
	var mu sync.Mutex
	h := &Handler{
		Rules:  Rules{Allowed: []string{"localhost:" + strconv.Itoa(port), "resolves.test"}},
		Hosts:  map[string]netip.Addr{"resolves.test": netip.MustParseAddr("127.0.0.1")},
		Notice: func(l string) { mu.Lock(); notices = append(notices, l); mu.Unlock() },
	}
	ask := func(host string, port int) string {
		c := serve(t, h)
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", net.JoinHostPort(host, strconv.Itoa(port)))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Sprintf("%d %s", resp.StatusCode, b)
		}
		fmt.Fprintf(c, "hello\n")
		rest, _ := io.ReadAll(br)
		return string(rest)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "LocalHost."} {
		if got := ask(host, port); !strings.Contains(got, "got hello") {
			t.Errorf("CONNECT %s to the named port: %q", host, got)
		}
	}
	want := fmt.Sprintf(`add "localhost:%d"`, other)
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if got := ask(host, other); !strings.HasPrefix(got, "403") || !strings.Contains(got, want) {
			t.Errorf("CONNECT %s to an unnamed port: %q", host, got)
		}
	}
	for _, host := range []string{"127.0.0.2", "db.localhost", "resolves.test", "0.0.0.0"} {
		if got := ask(host, port); !strings.HasPrefix(got, "403") {
			t.Errorf("CONNECT %s at the named port: %q", host, got)
		}
	}
	// A server of the session comes first.
	h.Loopback = func(context.Context, int) (net.Conn, error) { return net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(other)) }
	if got := ask("localhost", 1); !strings.Contains(got, "got hello") {
		t.Errorf("CONNECT to a server of the session: %q", got)
	}
	h.Loopback = func(context.Context, int) (net.Conn, error) { return nil, errors.New("nothing there") }
	if got := ask("localhost", other); !strings.Contains(got, "no command of this session listens") || !strings.Contains(got, want) {
		t.Errorf("CONNECT to nothing of the session's, unnamed: %q", got)
	}

	// A plain TCP client's connection, bridged by init.
	forward := func(to netip.AddrPort) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		a, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		go h.ServeForwarded(context.Background(), b, to)
		fmt.Fprintf(a, "hello\n")
		out, _ := io.ReadAll(a)
		return string(out)
	}
	if got := forward(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))); !strings.Contains(got, "got hello") {
		t.Errorf("a forwarded connection to the named port: %q", got)
	}
	if got := forward(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(other))); got != "" {
		t.Errorf("a forwarded connection to an unnamed port: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(notices, "\n"), want) {
		t.Errorf("notices name no setting: %q", notices)
	}
}

package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestSentinel_keepsTheShape(t *testing.T) {
	t.Parallel()
	for _, real := range []string{
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
		"sk-proj-abcdefghijklmnopqrstuvwxyz012345",
		"0123456789abcdef0123456789abcdef",
		"0123456789ABCDEF0123456789ABCDEF",
		"AKIAIOSFODNN7EXAMPLE",
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	} {
		s := Sentinel(real)
		if len(s) != len(real) || s == real {
			t.Errorf("Sentinel(%q) = %q: not the same length, or the same value", real, s)
		}
		for i := range real {
			r, c := real[i], s[i]
			class := func(b byte) string {
				switch {
				case b >= '0' && b <= '9', b >= 'a' && b <= 'f', b >= 'A' && b <= 'F':
					return "hexish"
				case b >= 'a' && b <= 'z':
					return "lower"
				case b >= 'A' && b <= 'Z':
					return "upper"
				}
				return string(b)
			}
			if cr := class(r); cr != "hexish" && cr != "lower" && cr != "upper" && r != c {
				t.Errorf("Sentinel(%q) = %q: punctuation at %d changed", real, s, i)
			}
		}
		if strings.HasPrefix(real, "ghp_") && !strings.HasPrefix(s, "ghp_") {
			t.Errorf("Sentinel(%q) = %q lost the prefix", real, s)
		}
		if regexp.MustCompile(`^[0-9a-f]+$`).MatchString(real) && !regexp.MustCompile(`^[0-9a-f]+$`).MatchString(s) {
			t.Errorf("Sentinel(%q) = %q left the hexadecimal alphabet", real, s)
		}
	}
}

func TestRewriter_acrossChunks(t *testing.T) {
	t.Parallel()
	in := &Inject{Secrets: []Secret{{Name: "TOKEN", Real: "REALREALREAL", Sentinel: "SENTSENTSENT", Hosts: []string{"ok.test"}}}}
	stream := "GET /?q=SENTSENTSENT HTTP/1.1\r\nAuthorization: token SENTSENTSENT\r\n\r\nbody SENTSENTSENT end SENTS"
	for cut := 1; cut < len(stream); cut++ {
		rw := in.rewriter("ok.test", nil, true)
		var out []byte
		for _, part := range []string{stream[:cut], stream[cut:]} {
			b, err := rw.feed([]byte(part))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		}
		out = append(out, rw.flush()...)
		if want := strings.ReplaceAll(stream, "SENTSENTSENT", "REALREALREAL"); string(out) != want {
			t.Fatalf("cut at %d: %q, want %q", cut, out, want)
		}
	}
	for cut := 1; cut < len(stream); cut++ {
		rw := in.rewriter("other.example.com", []string{"other.example.com"}, true)
		var err error
		var sent []byte
		for _, part := range []string{stream[:cut], stream[cut:]} {
			var b []byte
			if b, err = rw.feed([]byte(part)); err != nil {
				break
			}
			sent = append(sent, b...)
		}
		var es *ErrSentinel
		if !errors.As(err, &es) || strings.Contains(string(sent), "SENTSENTSENT") {
			t.Fatalf("cut at %d toward another host: err %v, passed %q", cut, err, sent)
		}
	}
}

// injectFixture is a TLS server with its own CA that records the
// Authorization header of each request, reached through a Handler that
// injects one masked token toward inject.example.com only.
type injectFixture struct {
	h        *Handler
	srv      *httptest.Server
	mu       sync.Mutex
	seen     []string
	notices  []string
	sentinel string
}

const fixtureReal = "ghp_REALrealREALrealREALrealREALreal1234"

func newInjectFixture(t *testing.T) *injectFixture {
	f := &injectFixture{sentinel: Sentinel(fixtureReal)}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.seen = append(f.seen, r.Host+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")+" "+string(body))
		f.mu.Unlock()
		fmt.Fprintf(w, "ok %s", r.Header.Get("Authorization"))
	}))
	t.Cleanup(f.srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(f.srv.Certificate())
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	lo := netip.MustParseAddr("127.0.0.1")
	f.h = &Handler{
		Rules: Rules{Allowed: []string{"inject.example.com", "other.example.com", "127.0.0.1"}},
		Hosts: map[string]netip.Addr{"inject.example.com": lo, "other.example.com": lo},
		Inject: &Inject{CA: ca, Roots: roots, TerminateAll: true,
			Secrets: []Secret{{Name: "GITHUB_TOKEN", Real: fixtureReal, Sentinel: f.sentinel, Hosts: []string{"inject.example.com"}}}},
		Notice: func(l string) { f.mu.Lock(); f.notices = append(f.notices, l); f.mu.Unlock() },
	}
	return f
}

// client is an HTTP client whose connections go through f.h and that
// trusts the proxy's CA (as a sandboxed command's bundle makes it).
func (f *injectFixture) client(t *testing.T) *http.Client {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.h.ServeConn(context.Background(), c)
		}
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.h.Inject.CA.CertPEM())
	proxy, _ := url.Parse("http://" + ln.Addr().String())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func TestHandler_injectsOnlyTowardItsHosts(t *testing.T) {
	t.Parallel()
	f := newInjectFixture(t)
	c := f.client(t)
	port := f.srv.Listener.Addr().(*net.TCPAddr).Port
	req, _ := http.NewRequest("POST", fmt.Sprintf("https://inject.example.com:%d/x?t=%s", port, f.sentinel), strings.NewReader("body="+f.sentinel))
	req.Header.Set("Authorization", "token "+f.sentinel)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "ok token " + fixtureReal; string(b) != want {
		t.Errorf("inject.example.com answered %q, want %q", b, want)
	}
	f.mu.Lock()
	seen := strings.Join(f.seen, "\n")
	f.mu.Unlock()
	if strings.Count(seen, fixtureReal) != 3 || strings.Contains(seen, f.sentinel) {
		t.Errorf("inject.example.com saw %q: want the real value in the query, the header and the body", seen)
	}

	req, _ = http.NewRequest("GET", fmt.Sprintf("https://other.example.com:%d/", port), nil)
	req.Header.Set("Authorization", "token "+f.sentinel)
	resp, err = c.Do(req)
	if err == nil {
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("other.example.com: %d %q, want a refusal", resp.StatusCode, b)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Contains(strings.Join(f.seen, "\n"), "other.example.com") {
		t.Errorf("other.example.com received the request: %q", f.seen)
	}
	if n := strings.Join(f.notices, "\n"); !strings.Contains(n, "GITHUB_TOKEN") || !strings.Contains(n, "other.example.com") {
		t.Errorf("notices %q do not report the attempt toward other.example.com", f.notices)
	}
}

func TestHandler_sentinelInAHostName(t *testing.T) {
	t.Parallel()
	f := newInjectFixture(t)
	c := f.client(t)
	_, err := c.Get("https://" + strings.ToLower(f.sentinel[4:]) + ".other.example.com/")
	if err == nil {
		t.Fatal("a host name carrying the sentinel was reached")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := strings.Join(f.notices, "\n"); !strings.Contains(n, "GITHUB_TOKEN") {
		t.Errorf("notices %q do not report the sentinel in the name", f.notices)
	}
}

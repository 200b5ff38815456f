package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/tools"
)

func newSession(t *testing.T) *tools.Session {
	t.Helper()
	return tooltest.NewSession(t, tools.SessionOptions{})
}

// call runs tool with args through the pipeline, as a client's call runs;
// an error result comes back as the error.
func call(t *testing.T, tool *tools.Tool, uc *tools.UseContext, args any) (*tools.Result, error) {
	t.Helper()
	res := tooltest.Call(context.Background(), t, tool, uc, args, nil)
	if res.IsError {
		return nil, errors.New(res.Text)
	}
	return res, nil
}

func mustCall(t *testing.T, tool *tools.Tool, uc *tools.UseContext, args any) (*tools.Result, WebFetchOutput) {
	t.Helper()
	res, err := call(t, tool, uc, args)
	if err != nil {
		t.Fatalf("call failed: %v", err)
	}
	out, ok := res.Output.(WebFetchOutput)
	if !ok {
		t.Fatalf("output is %T, want WebFetchOutput", res.Output)
	}
	return res, out
}

// fakeSampler answers with a fixed text and records what it was asked.
type fakeSampler struct {
	mu     sync.Mutex
	answer string
	err    error
	users  []string
}

func (f *fakeSampler) Sample(_ context.Context, _, user string, _ int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users = append(f.users, user)
	return f.answer, f.err
}

const page1 = `<!doctype html><html><head><title>T</title><style>p{}</style><script>alert(1)</script></head>
<body><h1>Hello</h1><p>Some <b>bold</b> text and a <a href="/docs">link</a>.</p>
<ul><li>one</li><li>two</li></ul>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></body></html>`

func TestWebFetch(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "elsewhere")
	}))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page1)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "just *text*")
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
		w.Write([]byte{'c', 'a', 'f', 0xe9})
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		// Same port, other host name: a different host.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/x", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", "2048")
		w.Write(make([]byte, 2048))
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // let the tool sniff
		w.Write([]byte("%PDF-1.4\x00\x01\x02 binary"))
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("a", FetchPageChars)+strings.Repeat("b", 100))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tool := WebFetch(FetchOptions{AllowPrivate: true})
	uc := &tools.UseContext{Session: newSession(t)}

	t.Run("html_to_markdown", func(t *testing.T) {
		res, out := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/page", "prompt": "what is it?"})
		for _, want := range []string{"Prompt: what is it?", "# Hello", "Some **bold** text", "[link](" + srv.URL + "/docs)", "- one", "| a | b |"} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("text lacks %q:\n%s", want, res.Text)
			}
		}
		for _, unwanted := range []string{"alert", "p{}"} {
			if strings.Contains(res.Text, unwanted) {
				t.Errorf("text contains %q from a script or style:\n%s", unwanted, res.Text)
			}
		}
		if out.Code != 200 || out.ContentType != "text/html" || out.PromptApplied || out.NextOffset != nil {
			t.Errorf("output = %+v", out)
		}
	})
	t.Run("plain_text_as_is", func(t *testing.T) {
		res, _ := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/plain", "prompt": "p"})
		if !strings.HasSuffix(res.Text, "\n\njust *text*") {
			t.Errorf("text = %q", res.Text)
		}
	})
	t.Run("latin1_decoded", func(t *testing.T) {
		res, _ := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/latin1", "prompt": "p"})
		if !strings.HasSuffix(res.Text, "café") {
			t.Errorf("text = %q", res.Text)
		}
	})
	t.Run("same_host_redirect_followed", func(t *testing.T) {
		res, out := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/moved", "prompt": "p"})
		if out.URL != srv.URL+"/plain" || !strings.Contains(res.Text, "just *text*") {
			t.Errorf("url %q, text %q", out.URL, res.Text)
		}
	})
	t.Run("cross_host_redirect_reported", func(t *testing.T) {
		res, out := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/away", "prompt": "the prompt"})
		to := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/x"
		if out.RedirectURL != to || out.Code != http.StatusFound || res.IsError {
			t.Errorf("output = %+v", out)
		}
		for _, want := range []string{"different host", "url: " + to, "prompt: the prompt"} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("text lacks %q:\n%s", want, res.Text)
			}
		}
		if strings.Contains(res.Text, "elsewhere") {
			t.Errorf("the other host was fetched:\n%s", res.Text)
		}
	})
	t.Run("redirect_loop_stops", func(t *testing.T) {
		_, err := call(t, tool, uc, map[string]any{"url": srv.URL + "/loop", "prompt": "p"})
		if err == nil || !strings.Contains(err.Error(), "redirects") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("non_text_reported", func(t *testing.T) {
		res, out := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/image.png", "prompt": "p"})
		if !strings.Contains(res.Text, "image/png content (2KB), which is not text") || out.Bytes != 2048 {
			t.Errorf("text %q, output %+v", res.Text, out)
		}
	})
	t.Run("sniffed_binary_reported", func(t *testing.T) {
		res, _ := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/binary", "prompt": "p"})
		if !strings.Contains(res.Text, "application/pdf content") {
			t.Errorf("text %q", res.Text)
		}
	})
	t.Run("http_error_status", func(t *testing.T) {
		_, err := call(t, tool, uc, map[string]any{"url": srv.URL + "/missing", "prompt": "p"})
		if err == nil || !strings.Contains(err.Error(), "404 Not Found") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("size_cap_and_offset_paging", func(t *testing.T) {
		res, out := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/long", "prompt": "p"})
		if out.TotalChars != FetchPageChars+100 || out.NextOffset == nil || *out.NextOffset != FetchPageChars {
			t.Fatalf("output = %+v", out)
		}
		if strings.Contains(res.Text, "b") && !strings.Contains(res.Text, "offset: 40000") {
			t.Errorf("first page shows text past the cap")
		}
		if !strings.Contains(res.Text, "100 more characters. Call WebFetch again with offset: 40000") {
			t.Errorf("no paging notice:\n%s", res.Text[len(res.Text)-200:])
		}
		if len(res.Text) > FetchMaxResultSizeChars {
			t.Errorf("text is %d characters, over the tool's budget %d", len(res.Text), FetchMaxResultSizeChars)
		}
		res, out = mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/long", "prompt": "p", "offset": FetchPageChars})
		if !strings.HasSuffix(res.Text, strings.Repeat("b", 100)) || out.NextOffset != nil || !out.Cached || out.Offset != FetchPageChars {
			t.Errorf("second page: output %+v, text ends %q", out, res.Text[len(res.Text)-20:])
		}
		_, err := call(t, tool, uc, map[string]any{"url": srv.URL + "/long", "prompt": "p", "offset": FetchPageChars + 101})
		if err == nil || !strings.Contains(err.Error(), "past the end") {
			t.Errorf("offset past the end: err = %v", err)
		}
	})
	t.Run("cache_hit", func(t *testing.T) {
		before := hits.Load()
		_, out := mustCall(t, tool, uc, map[string]any{"url": srv.URL + "/page", "prompt": "again"})
		if !out.Cached || hits.Load() != before {
			t.Errorf("cached = %v, server hits %d → %d", out.Cached, before, hits.Load())
		}
		other := &tools.UseContext{Session: newSession(t)}
		_, out = mustCall(t, tool, other, map[string]any{"url": srv.URL + "/page", "prompt": "again"})
		if out.Cached || hits.Load() != before+1 {
			t.Errorf("another session shared the cache: cached = %v", out.Cached)
		}
	})
}

func TestWebFetch_cache_expires_after_15_minutes(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "x")
	}))
	defer srv.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tool := WebFetch(FetchOptions{AllowPrivate: true, now: func() time.Time { return now }})
	uc := &tools.UseContext{Session: newSession(t)}
	args := map[string]any{"url": srv.URL, "prompt": "p"}
	steps := []struct {
		advance    time.Duration
		wantCached bool
		wantHits   int32
	}{
		{0, false, 1},
		{14 * time.Minute, true, 1},
		{59 * time.Second, true, 1},
		{time.Second, false, 2}, // 15 minutes after the first fetch
		{time.Minute, true, 2},
	}
	for i, st := range steps {
		now = now.Add(st.advance)
		_, out := mustCall(t, tool, uc, args)
		if out.Cached != st.wantCached || hits.Load() != st.wantHits {
			t.Errorf("step %d: cached = %v (want %v), hits = %d (want %d)", i, out.Cached, st.wantCached, hits.Load(), st.wantHits)
		}
	}
}

func TestWebFetch_private_addresses_refused_by_default(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "secret")
	}))
	defer srv.Close()
	tool := WebFetch(FetchOptions{})
	uc := &tools.UseContext{Session: newSession(t)}
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		_, err := call(t, tool, uc, map[string]any{"url": u, "prompt": "p"})
		if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "--web-allow-private") {
			t.Errorf("%s: err = %v", u, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the server was reached %d times", hits.Load())
	}
}

func TestWebFetch_timeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	tool := WebFetch(FetchOptions{AllowPrivate: true, Timeout: 50 * time.Millisecond})
	_, err := call(t, tool, &tools.UseContext{Session: newSession(t)}, map[string]any{"url": srv.URL, "prompt": "p"})
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("err = %v", err)
	}
}

func TestWebFetch_body_over_max_bytes_truncated(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("z", 2000))
	}))
	defer srv.Close()
	tool := WebFetch(FetchOptions{AllowPrivate: true, MaxBytes: 1000})
	res, out := mustCall(t, tool, &tools.UseContext{Session: newSession(t)}, map[string]any{"url": srv.URL, "prompt": "p"})
	if out.TotalChars != 1000 || !strings.Contains(res.Text, "larger than 1000 bytes") {
		t.Errorf("output %+v, text ends %q", out, res.Text[len(res.Text)-100:])
	}
}

func TestWebFetch_prompt_applied_by_sampler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page1)
	}))
	defer srv.Close()
	tool := WebFetch(FetchOptions{AllowPrivate: true})

	t.Run("answer_returned", func(t *testing.T) {
		s := &fakeSampler{answer: "  It greets.  "}
		res, out := mustCall(t, tool, &tools.UseContext{Session: newSession(t), Sampler: s}, map[string]any{"url": srv.URL, "prompt": "What does it do?"})
		if res.Text != "It greets." || !out.PromptApplied {
			t.Errorf("text %q, output %+v", res.Text, out)
		}
		if len(s.users) != 1 || !strings.Contains(s.users[0], "# Hello") || !strings.HasSuffix(s.users[0], "What does it do?") {
			t.Errorf("sampler was asked %q", s.users)
		}
	})
	t.Run("failure_falls_back_to_content", func(t *testing.T) {
		s := &fakeSampler{err: errors.New("client refused")}
		res, out := mustCall(t, tool, &tools.UseContext{Session: newSession(t), Sampler: s}, map[string]any{"url": srv.URL, "prompt": "q"})
		if out.PromptApplied || !strings.Contains(res.Text, "# Hello") || !strings.Contains(res.Text, "Prompt: q") {
			t.Errorf("text %q", res.Text)
		}
	})
}

func TestWebFetch_url_validation(t *testing.T) {
	t.Parallel()
	tool := WebFetch(FetchOptions{})
	uc := &tools.UseContext{Session: newSession(t)}
	cases := []struct {
		name, url, prompt, want string
	}{
		{"relative_url", "/docs", "p", "must be absolute"},
		{"ftp_scheme", "ftp://example.com/x", "p", `scheme "ftp"`},
		{"credentials", "https://user:pw@example.com/", "p", "user name or password"},
		{"too_long", "https://example.com/" + strings.Repeat("a", FetchMaxURLLength), "p", "at most 2000"},
		{"blank_prompt", "https://example.com/", "  ", "prompt must be a non-empty string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := call(t, tool, uc, map[string]any{"url": c.url, "prompt": c.prompt})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestFetchURL_https_upgrade(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"http://example.com/a#frag":  "https://example.com/a",
		"HTTP://example.com":         "https://example.com",
		"https://example.com/x?y=1":  "https://example.com/x?y=1",
		"http://127.0.0.1:8080/x":    "http://127.0.0.1:8080/x",
		"http://localhost/x":         "http://localhost/x",
		"http://[::1]:9/x":           "http://[::1]:9/x",
		"http://app.localhost:3000/": "http://app.localhost:3000/",
		"http://10.0.0.1/":           "https://10.0.0.1/",
	}
	for in, want := range cases {
		u, err := fetchURL(in)
		if err != nil || u.String() != want {
			t.Errorf("fetchURL(%q) = %v, %v; want %q", in, u, err, want)
		}
	}
}

func TestAddressKind(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"8.8.8.8":               "",
		"2606:4700::1111":       "",
		"127.0.0.1":             "loopback",
		"::1":                   "loopback",
		"::ffff:127.0.0.1":      "loopback",
		"10.1.2.3":              "private",
		"172.16.0.1":            "private",
		"192.168.1.1":           "private",
		"fd00::1":               "private",
		"169.254.169.254":       "link-local",
		"fe80::1":               "link-local",
		"0.0.0.0":               "unspecified",
		"::":                    "unspecified",
		"224.0.0.1":             "multicast",
		"100.64.0.1":            "private (carrier-grade NAT)",
		"64:ff9b::a9fe:a9fe":    "link-local", // NAT64 of 169.254.169.254
		"255.255.255.255":       "broadcast",
		"64:ff9b::808:808":      "",
		"::ffff:192.168.10.200": "private",
	}
	for in, want := range cases {
		if got := addressKind(netip.MustParseAddr(in)); got != want {
			t.Errorf("addressKind(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestSameHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		from, to string
		want     bool
	}{
		{"https://example.com/a", "https://example.com/b", true},
		{"https://example.com/a", "https://www.example.com/b", true},
		{"https://www.example.com/a", "https://example.com/b", true},
		{"https://example.com/a", "https://docs.example.com/b", false},
		{"https://example.com/a", "http://example.com/b", false},
		{"http://example.com/a", "https://example.com/b", true},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:9090/b", false},
		{"https://example.com/a", "https://example.com:443/b", true},
	}
	for _, c := range cases {
		a, _ := url.Parse(c.from)
		b, _ := url.Parse(c.to)
		if got := sameHost(a, b); got != c.want {
			t.Errorf("sameHost(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

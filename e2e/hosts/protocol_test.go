package hosts

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// protocolLog is a reverse proxy in front of agent-mcp's HTTP endpoint
// that notes, for every POST a host sends, the protocol version it names
// (Mcp-Protocol-Version) and whether it is an initialize request.
type protocolLog struct {
	URL string

	mu       sync.Mutex
	versions map[string]int // POSTs by Mcp-Protocol-Version ("" for none)
	inits    int            // initialize requests
	methods  map[string]int // POSTs by Mcp-Method
	// tasksCalls counts the tools/call requests that accept a task (their
	// _meta names the Tasks extension).
	tasksCalls int
}

func newProtocolLog(t *testing.T, target string) *protocolLog {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	l := &protocolLog{versions: map[string]int{}, methods: map[string]int{}}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = u.Path; r.Out.Host = u.Host },
		FlushInterval: -1, // event streams as they come
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			l.mu.Lock()
			l.versions[r.Header.Get("Mcp-Protocol-Version")]++
			if bytes.Contains(body, []byte(`"method":"initialize"`)) {
				l.inits++
			}
			method := r.Header.Get("Mcp-Method")
			l.methods[method]++
			if method == "tools/call" && bytes.Contains(body, []byte(`"io.modelcontextprotocol/tasks"`)) {
				l.tasksCalls++
			}
			l.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	l.URL = srv.URL + u.Path
	return l
}

// modern reports whether every POST named protocol 2026-07-28 (no session,
// no initialize), and what was seen.
func (l *protocolLog) modern() (bool, map[string]int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]int{}
	for v, n := range l.versions {
		seen[v] = n
	}
	return l.inits == 0 && len(seen) == 1 && seen["2026-07-28"] > 0, seen, l.inits
}

// tasks reports the POSTs by method and how many tools/call requests
// accepted a task.
func (l *protocolLog) tasks() (map[string]int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]int{}
	for m, n := range l.methods {
		seen[m] = n
	}
	return seen, l.tasksCalls
}

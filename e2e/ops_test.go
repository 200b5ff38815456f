package e2e

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// opsServer is agent-mcp serving HTTP with an admin listener, as an
// operator runs it.
type opsServer struct {
	cmd        *exec.Cmd
	url, admin string // the MCP endpoint and the admin listener's base URL
	dir        string
}

// startOps starts agent-mcp --http with token T, an admin listener and
// extra flags, with env added to its environment.
func startOps(t *testing.T, env []string, extra ...string) *opsServer {
	t.Helper()
	dir := workspace(t)
	args := append([]string{"--http", "--addr", "127.0.0.1:0", "--token", "T", "--admin-addr", "127.0.0.1:0", "--shutdown-grace", "60s"}, extra...)
	cmd := testbin.ServeCmd(t, binary, dir, args...)
	cmd.Env = append(cmd.Env, env...)
	urls := testbin.StartServer(t, cmd, "agent-mcp serving MCP at ", "Probes and metrics at ")
	return &opsServer{cmd: cmd, url: urls[0], admin: adminURL(urls[1]), dir: dir}
}

// adminURL is the admin listener's URL from what follows "Probes and
// metrics at " in the server's start lines ("URL (/healthz, ...)").
func adminURL(said string) string {
	u, _, _ := strings.Cut(said, " ")
	return u
}

// base is the MCP listener's base URL.
func (s *opsServer) base() string { return strings.TrimSuffix(s.url, "/mcp") }

// get fetches url with an optional bearer token and Host, returning the
// status and body.
func get(t *testing.T, url, token, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads /metrics with the Prometheus text parser.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, url, token, "")
	if code != 200 {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the metrics: %v\n%s", err, body)
	}
	return fams
}

// value is the value of the series of family name whose labels include
// labels (counter, gauge or histogram count), and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		match := true
		for k, v := range labels {
			found := false
			for _, l := range m.Label {
				found = found || (l.GetName() == k && l.GetValue() == v)
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestOps_probes_and_metrics: the probes need no token and answer from
// any Host; /metrics needs the token on the MCP listener and none on a
// loopback admin listener, and its counters move with the calls.
func TestOps_probes_and_metrics(t *testing.T) {
	t.Parallel()
	s := startOps(t, nil)
	for _, base := range []string{s.base(), s.admin} {
		if code, body := get(t, base+"/healthz", "", "10.1.2.3:8765"); code != 200 || strings.TrimSpace(body) != "ok" {
			t.Errorf("%s/healthz from a pod address: %d %q", base, code, body)
		}
		if code, body := get(t, base+"/readyz", "", "10.1.2.3:8765"); code != 200 || strings.TrimSpace(body) != "ready" {
			t.Errorf("%s/readyz: %d %q", base, code, body)
		}
	}
	if code, _ := get(t, s.base()+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token on the MCP listener: %d, want 401", code)
	}
	if code, _ := get(t, s.base()+"/metrics", "wrong", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d, want 401", code)
	}
	if code, _ := get(t, s.base()+"/metrics", "T", "evil.example:8765"); code != http.StatusForbidden {
		t.Errorf("/metrics to a foreign Host (DNS rebinding): %d, want 403", code)
	}

	before := scrape(t, s.admin+"/metrics", "")
	if _, ok := value(before, "agent_mcp_tool_calls_total", nil); ok {
		t.Errorf("calls counted before any call")
	}
	cs := testbin.HTTPVersion(t, s.url, "T", nil, "2025-11-25")
	callOK(t, cs, "Read", map[string]any{"file_path": filepath.Join(s.dir, "hello.txt")})
	callOK(t, cs, "Bash", map[string]any{"command": "echo hi"})
	if res := callOK(t, cs, "Bash", map[string]any{"command": "exit 3"}); !res.IsError {
		t.Fatal("exit 3 should be an error result")
	}
	callOK(t, cs, "Bash", map[string]any{"command": "seq 1 20000"}) // over Bash's budget: persisted
	callOK(t, cs, "Read", map[string]any{"file_path": filepath.Join(s.dir, "nope.txt")})

	after := scrape(t, s.base()+"/metrics", "T")
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"agent_mcp_tool_calls_total", map[string]string{"tool": "Read", "outcome": "ok"}, 1},
		{"agent_mcp_tool_calls_total", map[string]string{"tool": "Read", "outcome": "error"}, 1},
		{"agent_mcp_tool_calls_total", map[string]string{"tool": "Bash", "outcome": "ok"}, 2},
		{"agent_mcp_tool_calls_total", map[string]string{"tool": "Bash", "outcome": "error"}, 1},
		{"agent_mcp_tool_call_duration_seconds", map[string]string{"tool": "Bash"}, 3},
		{"agent_mcp_persisted_results_total", nil, 1},
		{"agent_mcp_sessions", nil, 1},
	} {
		if got, ok := value(after, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	confined, _ := value(after, "agent_mcp_sandbox_launches_confined_total", nil)
	unconfined, _ := value(after, "agent_mcp_sandbox_launches_unconfined_total", nil)
	if confined+unconfined != 3 {
		t.Errorf("sandbox launches: %v confined + %v unconfined, want 3 commands", confined, unconfined)
	}
	if got, _ := value(after, "agent_mcp_persisted_result_bytes_total", nil); got < 100_000 {
		t.Errorf("persisted result bytes = %v, want seq's output", got)
	}
	if got, ok := value(after, "agent_mcp_permission_decisions_total", map[string]string{"behavior": "allow"}); !ok || got < 4 {
		t.Errorf("allow decisions = %v, want at least 4", got)
	}
	if got, ok := value(after, "agent_mcp_http_responses_total", map[string]string{"code": "200"}); !ok || got < 5 {
		t.Errorf("HTTP 200 responses = %v, want the calls' and the scrape's", got)
	}
	if got, ok := value(after, "agent_mcp_http_responses_total", map[string]string{"code": "401"}); !ok || got != 2 {
		t.Errorf("HTTP 401 responses = %v, want 2", got)
	}
	if _, ok := value(after, "agent_mcp_background_tasks", nil); !ok {
		t.Errorf("no background task gauge")
	}
}

// holdCall starts a Bash call in cs that runs until the file release
// exists in dir; the result comes on the channel.
func holdCall(cs *mcp.ClientSession) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash",
			Arguments: map[string]any{"command": "while [ ! -e release ]; do sleep 0.05; done; echo released"}})
		done <- err
	}()
	return done
}

// waitReadyz polls /readyz until its status is want, returning the body.
func waitReadyz(t *testing.T, url string, want int) string {
	t.Helper()
	var code int
	var body string
	testbin.WaitFor(t, fmt.Sprintf("%s/readyz to answer %d", url, want), func() bool {
		code, body = get(t, url+"/readyz", "", "")
		return code == want
	})
	return body
}

// TestOps_readiness_over_caps_and_draining: with every session slot busy
// the server is not ready, and ready again once one is idle; on SIGTERM it
// is not ready while calls drain, still alive, and its calls finish.
func TestOps_readiness_over_caps_and_draining(t *testing.T) {
	t.Parallel()
	s := startOps(t, nil, "--max-sessions", "1")
	cs := testbin.HTTPVersion(t, s.url, "T", nil, "2025-11-25")
	release := filepath.Join(s.dir, "release")

	done := holdCall(cs)
	if body := waitReadyz(t, s.base(), http.StatusServiceUnavailable); !strings.Contains(body, "every session slot is busy") {
		t.Errorf("over the cap: %q", body)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, s.admin, http.StatusOK)
	if err := os.Remove(release); err != nil {
		t.Fatal(err)
	}

	done = holdCall(cs)
	waitReadyz(t, s.base(), http.StatusServiceUnavailable) // the call is in flight
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{s.base(), s.admin} {
		if body := waitReadyz(t, base, http.StatusServiceUnavailable); !strings.Contains(body, "draining") {
			// Over the cap and draining both hold; wait for the drain.
			testbin.WaitFor(t, base+"/readyz to say draining", func() bool {
				_, body = get(t, base+"/readyz", "", "")
				return strings.Contains(body, "draining")
			})
		}
		if code, _ := get(t, base+"/healthz", "", ""); code != 200 {
			t.Errorf("%s/healthz while draining: %d, want 200 (alive)", base, code)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the drained call failed: %v", err)
	}
	_ = s.cmd.Wait()
}

// collector is an OTLP/HTTP trace receiver on loopback.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	url   string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func (c *collector) all() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// TestOps_trace_continues_the_clients_traceparent: with the standard OTLP
// variable set, a call whose _meta carries a traceparent arrives at the
// collector as a span of that trace, child of the client's span, with the
// pipeline's steps as its children.
func TestOps_trace_continues_the_clients_traceparent(t *testing.T) {
	t.Parallel()
	col := newCollector(t)
	s := startOps(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.url, "OTEL_SERVICE_NAME=agent-mcp-test"})
	cs := testbin.HTTPVersion(t, s.url, "T", nil, "2025-11-25")
	traceID, parentID := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name: "Read", Arguments: map[string]any{"file_path": filepath.Join(s.dir, "hello.txt")},
		Meta: mcp.Meta{"traceparent": fmt.Sprintf("00-%s-%s-01", traceID, parentID)},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The spans go out in batches; the server sends what is left when it
	// stops.
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	spans := col.all()
	var call *tracepb.Span
	for _, sp := range spans {
		if sp.Name == "tools/call Read" {
			call = sp
		}
	}
	if call == nil {
		t.Fatalf("no tools/call span among %d", len(spans))
	}
	if hex.EncodeToString(call.TraceId) != traceID || hex.EncodeToString(call.ParentSpanId) != parentID {
		t.Errorf("the call's span is in trace %x under %x, want %s under %s", call.TraceId, call.ParentSpanId, traceID, parentID)
	}
	children := map[string]bool{}
	for _, sp := range spans {
		if string(sp.ParentSpanId) == string(call.SpanId) {
			children[sp.Name] = true
		}
	}
	for _, step := range []string{"validate", "wait_for_session_gate", "permission", "call", "render_and_budget"} {
		if !children[step] {
			t.Errorf("no %q step under the call's span (children: %v)", step, children)
		}
	}
}

// TestOps_admin_needs_the_token_off_loopback: an admin listener on a
// non-loopback address (all interfaces, reached here over loopback) needs
// --allow-remote and serves /metrics only with the token.
func TestOps_admin_needs_the_token_off_loopback(t *testing.T) {
	t.Parallel()
	cmd := testbin.ServeCmd(t, binary, "", "--http", "--addr", "127.0.0.1:0", "--token", "T", "--admin-addr", "0.0.0.0:0")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--allow-remote") {
		t.Fatalf("a non-loopback admin address without --allow-remote: %v\n%s", err, out)
	}
	cmd = testbin.ServeCmd(t, binary, "", "--http", "--addr", "127.0.0.1:0", "--token", "T", "--admin-addr", "0.0.0.0:0", "--allow-remote")
	admin, err := url.Parse(adminURL(testbin.StartServer(t, cmd, "agent-mcp serving MCP at ", "Probes and metrics at ")[1]))
	if err != nil || admin.Port() == "" {
		t.Fatalf("the admin listener's URL: %v %v", admin, err)
	}
	// All interfaces, reached over loopback.
	base := "http://127.0.0.1:" + admin.Port()
	if code, _ := get(t, base+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get(t, base+"/metrics", "T", ""); code != 200 {
		t.Errorf("/metrics with the token: %d", code)
	}
	if code, _ := get(t, base+"/readyz", "", ""); code != 200 {
		t.Errorf("/readyz: %d", code)
	}
}

// TestOps_metrics_answer_labels_are_a_fixed_set: the answers counter is
// labelled from a fixed set of actions, whatever action strings a client
// sends back (issue 37, item 7: each string made a series of its own, so a
// client could grow /metrics without bound).
func TestOps_metrics_answer_labels_are_a_fixed_set(t *testing.T) {
	t.Parallel()
	s := startOps(t, nil, "--permission-mode", "default", "--settings", `{"sandbox":{"enabled":false}}`)
	var n atomic.Int64
	opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: fmt.Sprintf("made-up-%d", n.Add(1))}, nil
	}}
	cs := testbin.HTTPVersion(t, s.url, "T", opts, "2025-11-25")
	for i := 0; i < 12; i++ {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": fmt.Sprintf("npm publish --tag t%d", i)}})
	}
	if n.Load() == 0 {
		t.Fatal("no question was put")
	}
	fams := scrape(t, s.admin+"/metrics", "")
	fam := fams["agent_mcp_answers_total"]
	if fam == nil {
		t.Fatal("no answers counted")
	}
	allowed := map[string]bool{"accept": true, "decline": true, "cancel": true, "error": true, "invalid": true}
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "action" && !allowed[l.GetValue()] {
				t.Errorf("a series labelled with the client's own action %q", l.GetValue())
			}
		}
	}
	if got, ok := value(fams, "agent_mcp_answers_total", map[string]string{"action": "invalid"}); !ok || got != float64(n.Load()) {
		t.Errorf("invalid answers = %v, want %d", got, n.Load())
	}
}

// TestOps_slow_initialize_bodies_take_no_session_slot: POSTs that start a
// session but send their body slowly (here: never finish it) hold a
// connection, not one of --max-sessions' slots, so a client that sends
// its initialize whole still gets a session (issue 37, item 7: 100 such
// bodies locked every new session out).
func TestOps_slow_initialize_bodies_take_no_session_slot(t *testing.T) {
	t.Parallel()
	s := startOps(t, nil, "--max-sessions", "2")
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer T\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: 400\r\nExpect: 100-continue\r\n\r\n", u.Path, u.Host)
		// 100 Continue: the server's handler is reading the body, past
		// where a slot would have been taken before it.
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.Contains(line, "100 Continue") {
			t.Fatalf("slow POST %d: the server answered %q, %v", i, line, err)
		}
		if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize",`)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		cs := testbin.HTTPVersion(t, s.url, "T", nil, "2025-11-25")
		callOK(t, cs, "Bash", map[string]any{"command": "echo hi"})
	}
}

package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

const testToken = "test-token-0123456789"

// gate lets a test hold calls of the Hold tool open and observe them.
type gate struct {
	mu       sync.Mutex
	started  map[string]chan struct{}
	release  map[string]chan struct{}
	finished map[string]chan error // the ctx error the call ended with, or nil
	pids     chan int
	sessions chan *tools.Session
}

func newGate() *gate {
	return &gate{started: map[string]chan struct{}{}, release: map[string]chan struct{}{},
		finished: map[string]chan error{}, pids: make(chan int, 16), sessions: make(chan *tools.Session, 16)}
}

func (g *gate) chans(key string) (started, release chan struct{}, finished chan error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started[key] == nil {
		g.started[key] = make(chan struct{})
		g.release[key] = make(chan struct{})
		g.finished[key] = make(chan error, 1)
	}
	return g.started[key], g.release[key], g.finished[key]
}

type keyInput struct {
	Key string `json:"key"`
}

// testTools are a call that waits for the test (Hold), one that runs a
// real child process until cancelled (Sleep), and one that records its
// session (Mark).
func (g *gate) testTools() []*tools.Tool {
	yes := func(*keyInput) bool { return true }
	return []*tools.Tool{
		tools.New(tools.Tool{
			Name: "Hold", Description: "Waits until the test releases it or the call is cancelled.",
		}, tools.Handler[keyInput]{
			ReadOnly: yes, ConcurrencySafe: yes,
			Call: func(ctx context.Context, in *keyInput, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
				started, release, finished := g.chans(in.Key)
				close(started)
				select {
				case <-release:
					finished <- nil
					return &tools.Result{Text: "released " + in.Key}, nil
				case <-ctx.Done():
					finished <- ctx.Err()
					return nil, ctx.Err()
				}
			},
		}),
		tools.New(tools.Tool{
			Name: "Sleep", Description: "Runs sleep 300 as a child process until cancelled.",
		}, tools.Handler[keyInput]{
			ReadOnly: yes, ConcurrencySafe: yes,
			Call: func(ctx context.Context, in *keyInput, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
				_, _, finished := g.chans(in.Key)
				cmd := exec.CommandContext(ctx, "sleep", "300")
				if err := cmd.Start(); err != nil {
					return nil, err
				}
				g.pids <- cmd.Process.Pid
				_ = cmd.Wait()
				finished <- ctx.Err()
				return &tools.Result{Text: "slept"}, nil
			},
		}),
		tools.New(tools.Tool{
			Name: "Mark", Description: "Writes a file in the session's state directory and reports the session.",
		}, tools.Handler[keyInput]{
			ReadOnly: yes, ConcurrencySafe: yes,
			Call: func(ctx context.Context, in *keyInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
				if err := os.WriteFile(filepath.Join(uc.Session.StateDir(), "mark"), []byte(in.Key), 0o600); err != nil {
					return nil, err
				}
				g.sessions <- uc.Session
				return &tools.Result{Text: "marked " + in.Key}, nil
			},
		}),
	}
}

// startHTTP serves the test tools over HTTP on 127.0.0.1 with opts and
// returns the endpoint, the gate and a stop function that drains.
func startHTTP(t *testing.T, opts HTTPOptions) (*HTTPServer, *gate, func()) {
	t.Helper()
	g := newGate()
	pool, err := orchestrator.AssemblePool(g.testTools(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Name: "test", Version: "1", Pipeline: &orchestrator.Pipeline{Pool: pool, MaxParallel: 32},
		Session: tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Token == "" && !opts.NoAuth {
		opts.Token = testToken
	}
	h, stop := serveHTTP(t, srv, opts)
	return h, g, stop
}

// serveHTTP serves srv over HTTP with opts (a grace of 2s) until the test
// ends, and returns the endpoint and a stop function that drains.
func serveHTTP(t *testing.T, srv *Server, opts HTTPOptions) (*HTTPServer, func()) {
	t.Helper()
	h, err := srv.ListenHTTP(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, 2*time.Second) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return h, stop
}

// rawClient speaks streamable HTTP by hand, for the cases a real client
// would never produce.
type rawClient struct {
	t       *testing.T
	url     string
	token   string
	http    *http.Client
	session string
	chunked bool // bodies sent without a length
}

func newRaw(t *testing.T, h *HTTPServer) *rawClient {
	return &rawClient{t: t, url: h.URL, token: testToken, http: &http.Client{}}
}

func (c *rawClient) request(ctx context.Context, method, body string, hdr map[string]string) *http.Response {
	c.t.Helper()
	var r io.Reader = strings.NewReader(body)
	if c.chunked {
		r = io.MultiReader(r) // of no length the client knows: sent chunked
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, c.url, err)
	}
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// initialize opens a session and completes the handshake.
func (c *rawClient) initialize() {
	c.t.Helper()
	resp := c.request(context.Background(), "POST", initBody, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		c.t.Fatalf("initialize: %s: %s", resp.Status, body)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	if c.session == "" {
		c.t.Fatalf("initialize: no Mcp-Session-Id in the response")
	}
	resp = c.request(context.Background(), "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: %s", resp.Status)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, data string }

// readEvent reads the next event with data from an SSE stream.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.data != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, "id:"):
			ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
}

// readPrimingID reads SSE lines until an event id shows up (the priming
// event a resumable stream starts with).
func readPrimingID(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream before an event id: %v", err)
		}
		if id, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "id:"); ok {
			return strings.TrimSpace(id)
		}
	}
}

func callBody(id int, tool, key string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"key":%q}}}`, id, tool, key)
}

// Protocol versions over HTTP: the newest, which has no protocol sessions
// (state is kept per token), and the newest with sessions.
const (
	sessionless2026 = "2026-07-28"
	withSessions    = "2025-11-25"
)

// sdkClient connects the go-sdk client with the bearer token, asking for
// the protocol version (the client starts with server/discover for
// 2026-07-28) and checking that it is the one negotiated.
func sdkClient(t *testing.T, h *HTTPServer, token, version string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: testbin.Bearer{Token: token}}
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.URL, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol %s, want %s", got, version)
	}
	return cs
}

func receive[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-testbin.WaitDone(t):
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
}

func TestListenHTTP_refuses_unsafe_configurations(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	for _, tc := range []struct {
		name string
		opts HTTPOptions
		want string
	}{
		{"non_loopback_without_allow_remote", HTTPOptions{Addr: "0.0.0.0:0", Token: "t"}, "--allow-remote"},
		{"no_auth_on_non_loopback", HTTPOptions{Addr: "0.0.0.0:0", NoAuth: true, AllowRemote: true}, "--no-auth is only allowed on a loopback"},
		{"no_token", HTTPOptions{Addr: "127.0.0.1:0"}, "bearer token is required"},
		{"remote_without_token", HTTPOptions{Addr: "0.0.0.0:0", AllowRemote: true}, "bearer token is required"},
		{"tls_cert_without_key", HTTPOptions{Addr: "127.0.0.1:0", Token: "t", TLSCert: "c.pem"}, "--tls-cert and --tls-key"},
		{"bad_addr", HTTPOptions{Addr: "localhost", Token: "t"}, "expected host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := srv.ListenHTTP(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ListenHTTP(%+v) = %v, want an error containing %q", tc.opts, err, tc.want)
			}
		})
	}
}

func newTestServer(t *testing.T) *Server {
	pool, err := orchestrator.AssemblePool(newGate().testTools(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Pipeline: &orchestrator.Pipeline{Pool: pool}, Session: tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTP_request_checks(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{MaxBodyBytes: 1 << 10})
	port := h.ln.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		text   string
	}{
		{"no_token", map[string]string{"Authorization": ""}, initBody, 401, "token"},
		{"wrong_token", map[string]string{"Authorization": "Bearer nope"}, initBody, 401, "token"},
		{"basic_auth", map[string]string{"Authorization": "Basic " + testToken}, initBody, 401, "token"},
		{"scheme_only", map[string]string{"Authorization": "Bearer"}, initBody, 401, "token"},
		{"token_without_scheme", map[string]string{"Authorization": testToken}, initBody, 401, "token"},
		{"lowercase_scheme", map[string]string{"Authorization": "bearer " + testToken}, initBody, 200, ""},
		{"uppercase_scheme", map[string]string{"Authorization": "BEARER " + testToken}, initBody, 200, ""},
		{"extra_spaces", map[string]string{"Authorization": "Bearer   " + testToken}, initBody, 200, ""},
		{"rebound_host", map[string]string{"Host": "evil.example.com"}, initBody, 403, "Host"},
		{"rebound_host_with_port", map[string]string{"Host": fmt.Sprintf("evil.example.com:%d", port)}, initBody, 403, "Host"},
		{"localhost_lookalike", map[string]string{"Host": "localhost.evil.example.com"}, initBody, 403, "Host"},
		{"foreign_origin", map[string]string{"Origin": "https://evil.example.com"}, initBody, 403, "Origin"},
		{"null_origin", map[string]string{"Origin": "null"}, initBody, 403, "Origin"},
		{"localhost_host", map[string]string{"Host": fmt.Sprintf("localhost:%d", port)}, initBody, 200, ""},
		{"loopback_origin", map[string]string{"Origin": "http://localhost:3000"}, initBody, 200, ""},
		{"ipv6_loopback_origin", map[string]string{"Origin": "http://[::1]:3000"}, initBody, 200, ""},
		{"oversized_body", nil, `{"jsonrpc":"2.0","id":1,"method":"ping","pad":"` + strings.Repeat("x", 2<<10) + `"}`, 413, "exceeds"},
		{"malformed_json", nil, `{"jsonrpc":"2.0","id":1,`, 400, ""},
		{"call_before_initialize", nil, callBody(1, "Hold", "x"), 200, "invalid during session initialization"},
		{"unsupported_protocol_version", map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, initBody, 400, "Unsupported protocol version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newRaw(t, h)
			resp := c.request(context.Background(), "POST", tc.body, tc.hdr)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tc.status)
			}
			if !strings.Contains(string(body), tc.text) {
				t.Fatalf("body %q does not mention %q", body, tc.text)
			}
			if tc.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without a Bearer WWW-Authenticate challenge")
			}
		})
	}
}

func TestHTTP_oversized_chunked_body_is_refused(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{MaxBodyBytes: 1 << 10})
	c := newRaw(t, h)
	c.initialize()
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, `{"jsonrpc":"2.0","id":2,"method":"ping","pad":"`+strings.Repeat("x", 4<<10)+`"}`)
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", h.URL, pr) // no Content-Length: chunked
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", c.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %s, want 413", resp.Status)
	}
	// The session still works.
	resp = c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"id":3`) {
		t.Fatalf("ping after the refused body: %s %s", resp.Status, body)
	}
}

func TestHTTP_bad_session_keeps_others_serving(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{})
	good := sdkClient(t, h, testToken, withSessions)
	bad := newRaw(t, h)
	bad.initialize()
	for _, body := range []string{`not json`, `[]`, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":42}}`} {
		resp := bad.request(context.Background(), "POST", body, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && body != `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":42}}` {
			t.Errorf("POST %q answered 200", body)
		}
	}
	res, err := good.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "ok"}})
	if err != nil || res.IsError {
		t.Fatalf("the other session's call failed: %v %+v", err, res)
	}
}

func TestHTTP_session_ids_are_unguessable(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{})
	seen := map[string]bool{}
	for range 5 {
		c := newRaw(t, h)
		c.initialize()
		if len(c.session) < 22 || seen[c.session] {
			t.Fatalf("session id %q is short or repeated", c.session)
		}
		seen[c.session] = true
	}
}

func TestHTTP_idle_session_expires_and_its_state_goes(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{SessionTimeout: 300 * time.Millisecond})
	c := newRaw(t, h)
	c.initialize()
	resp := c.request(context.Background(), "POST", callBody(2, "Mark", "idle"), nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ts := receive(t, "the Mark call", g.sessions)
	closed := make(chan struct{})
	ts.OnClose(func() { close(closed) }) // stands for a background task
	dir := ts.StateDir()
	if _, err := os.Stat(filepath.Join(dir, "mark")); err != nil {
		t.Fatalf("the call's state file is missing: %v", err)
	}
	receive(t, "the idle session to close", closed)
	testbin.WaitFor(t, "the state directory to be removed", func() bool { _, err := os.Stat(dir); return errors.Is(err, os.ErrNotExist) })
	resp = c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a request on the expired session got %s, want 404", resp.Status)
	}
}

func TestHTTP_session_call_cap(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{MaxSessionCalls: 2})
	cs := sdkClient(t, h, testToken, withSessions)
	var wg sync.WaitGroup
	for _, k := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Hold", Arguments: map[string]any{"key": k}})
			if err != nil || res.IsError {
				t.Errorf("held call %s: %v %+v", k, err, res)
			}
		}()
	}
	for _, k := range []string{"a", "b"} {
		started, _, _ := g.chans(k)
		receive(t, "call "+k+" to start", started)
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "third"}})
	if err == nil || !strings.Contains(err.Error(), "2 calls in flight") {
		t.Fatalf("third concurrent call: err = %v, want the cap error", err)
	}
	// Another session is not affected by this one's cap.
	other := sdkClient(t, h, testToken, withSessions)
	if res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "other"}}); err != nil || res.IsError {
		t.Fatalf("other session's call: %v %+v", err, res)
	}
	<-g.sessions
	for _, k := range []string{"a", "b"} {
		_, release, _ := g.chans(k)
		close(release)
	}
	wg.Wait()
	// Below the cap again.
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "after"}}); err != nil || res.IsError {
		t.Fatalf("call after the held ones finished: %v %+v", err, res)
	}
}

func TestHTTP_client_disconnect_cancels_the_call(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{ResumeWindow: 100 * time.Millisecond})
	c := newRaw(t, h)
	c.initialize()
	ctx, cancel := context.WithCancel(context.Background())
	resp := c.request(ctx, "POST", callBody(2, "Sleep", "gone"), nil)
	pid := receive(t, "the child process", g.pids)
	cancel() // the client goes away mid-call
	resp.Body.Close()
	_, _, finished := g.chans("gone")
	if err := receive(t, "the call to end", finished); !errors.Is(err, context.Canceled) {
		t.Fatalf("the call ended with %v, want it cancelled", err)
	}
	testbin.WaitFor(t, "the child process to be gone", func() bool { return processGone(pid) })
}

func TestHTTP_resume_with_last_event_id(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{ResumeWindow: 10 * time.Second})
	c := newRaw(t, h)
	c.initialize()
	ctx, cancel := context.WithCancel(context.Background())
	resp := c.request(ctx, "POST", callBody(2, "Hold", "resume"), nil)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered %s, want an event stream", ct)
	}
	lastID := readPrimingID(t, bufio.NewReader(resp.Body))
	started, release, finished := g.chans("resume")
	receive(t, "the call to start", started)
	cancel() // the stream is lost
	resp.Body.Close()

	// Resume once the server has noticed the lost stream (before that it
	// answers 409, as to any client resuming too early). The resumed
	// stream's headers only come with its first event, so the GET runs
	// while the call is released.
	testbin.WaitFor(t, "the lost stream to be noticed", func() bool {
		h.calls.mu.Lock()
		defer h.calls.mu.Unlock()
		return len(h.calls.orphans) == 1
	})
	got := make(chan *http.Response, 1)
	go func() {
		got <- c.request(context.Background(), "GET", "", map[string]string{"Last-Event-ID": lastID, "Content-Type": ""})
	}()
	testbin.WaitFor(t, "the resumed stream to open", func() bool {
		h.calls.mu.Lock()
		defer h.calls.mu.Unlock()
		return h.calls.resuming[c.session] == 1
	})
	close(release)
	if err := receive(t, "the call to finish", finished); err != nil {
		t.Fatalf("the resumed call was cancelled: %v", err)
	}
	resumed := receive(t, "the resumed stream", got)
	defer resumed.Body.Close()
	if resumed.StatusCode != 200 {
		b, _ := io.ReadAll(resumed.Body)
		t.Fatalf("resuming: %s %s", resumed.Status, b)
	}
	ev, err := readEvent(bufio.NewReader(resumed.Body))
	if err != nil {
		t.Fatalf("reading the resumed stream: %v", err)
	}
	if !strings.Contains(ev.data, `"id":2`) || !strings.Contains(ev.data, "released resume") {
		t.Fatalf("resumed stream delivered %q, want the call's result", ev.data)
	}
}

func TestHTTP_drain_lets_calls_finish(t *testing.T) {
	t.Parallel()
	for _, version := range []string{sessionless2026, withSessions} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			testDrainLetsCallsFinish(t, version)
		})
	}
}

func testDrainLetsCallsFinish(t *testing.T, version string) {
	h, g, stop := startHTTP(t, HTTPOptions{})
	cs := sdkClient(t, h, testToken, version)
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Hold", Arguments: map[string]any{"key": "drain"}})
		if err != nil {
			t.Errorf("the in-flight call failed during the drain: %v", err)
		}
		result <- res
	}()
	started, release, _ := g.chans("drain")
	receive(t, "the call to start", started)
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	testbin.WaitFor(t, "the drain to start", h.calls.isDraining)
	// New sessions are refused while draining.
	resp := newRaw(t, h)
	if r, err := resp.http.Post(h.URL, "application/json", strings.NewReader(initBody)); err == nil {
		r.Body.Close()
		if r.StatusCode != http.StatusServiceUnavailable && r.StatusCode != http.StatusUnauthorized {
			t.Errorf("a new session during the drain got %s", r.Status)
		}
	}
	close(release)
	if res := receive(t, "the call's result", result); res == nil || res.IsError {
		t.Fatalf("the drained call's result: %+v", res)
	}
	receive(t, "Serve to return", stopped)
}

func TestHTTP_drain_cancels_calls_after_grace(t *testing.T) {
	t.Parallel()
	for _, version := range []string{sessionless2026, withSessions} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			testDrainCancelsCallsAfterGrace(t, version)
		})
	}
}

func testDrainCancelsCallsAfterGrace(t *testing.T, version string) {
	h, g, stop := startHTTP(t, HTTPOptions{}) // grace is 2s in startHTTP
	cs := sdkClient(t, h, testToken, version)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Sleep", Arguments: map[string]any{"key": "stuck"}})
	}()
	pid := receive(t, "the child process", g.pids)
	stop()
	_, _, finished := g.chans("stuck")
	if err := receive(t, "the call to end", finished); !errors.Is(err, context.Canceled) {
		t.Fatalf("the stuck call ended with %v, want it cancelled", err)
	}
	testbin.WaitFor(t, "the child process to be gone", func() bool { return processGone(pid) })
}

func TestHTTP_tls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	h, _, _ := startHTTP(t, HTTPOptions{TLSCert: certFile, TLSKey: keyFile})
	if !strings.HasPrefix(h.URL, "https://") {
		t.Fatalf("URL %s is not https", h.URL)
	}
	c := newRaw(t, h)
	c.http = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c.initialize()
}

// selfSigned writes a certificate for 127.0.0.1 and returns the files and
// a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	var cb, kbuf bytes.Buffer
	_ = pem.Encode(&cb, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	_ = pem.Encode(&kbuf, &pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	if err := os.WriteFile(certFile, cb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, kbuf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestHTTP_allowed_host_is_accepted_by_both_layers(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{AllowedHosts: []string{"agent.internal"}})
	c := newRaw(t, h)
	resp := c.request(context.Background(), "POST", initBody, map[string]string{"Host": "agent.internal"})
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("an allowed host got %s", resp.Status)
	}
	resp = c.request(context.Background(), "POST", initBody, map[string]string{"Host": "other.internal"})
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a host not on the list got %s, want 403", resp.Status)
	}
}

func TestHTTP_no_auth_on_loopback(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{NoAuth: true})
	c := newRaw(t, h)
	c.token = ""
	c.initialize()
	var out map[string]any
	resp := c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, map[string]string{"Accept": "application/json, text/event-stream"})
	defer resp.Body.Close()
	ev, err := readEvent(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(ev.data), &out); err != nil || out["result"] == nil {
		t.Fatalf("tools/list without a token on loopback: %q", ev.data)
	}
}

func TestHTTP_session_cap(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{MaxSessions: 2})
	ping := func(c *rawClient) int {
		resp := c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	first, second := newRaw(t, h), newRaw(t, h)
	first.initialize()
	second.initialize()
	// The first is made the busier of the two: a background process in
	// it must die with it.
	resp := first.request(context.Background(), "POST", callBody(2, "Mark", "first"), nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	firstSession := receive(t, "the first session's call", g.sessions)
	closed := make(chan struct{})
	firstSession.OnClose(func() { close(closed) })
	if ping(second) != http.StatusOK {
		t.Fatal("the second session does not answer")
	}

	t.Run("a_new_session_closes_the_one_idle_the_longest", func(t *testing.T) {
		third := newRaw(t, h)
		third.initialize()
		receive(t, "the first session to be closed", closed)
		testbin.WaitFor(t, "the closed session to be refused", func() bool { return ping(first) == http.StatusNotFound })
		if ping(second) != http.StatusOK || ping(third) != http.StatusOK {
			t.Fatal("the sessions left do not answer")
		}
	})

	t.Run("busy_sessions_are_kept_and_the_new_one_refused", func(t *testing.T) {
		// Each new client closes one of the two idle sessions left from
		// above; each is made busy before the next connects, so the next
		// can only close an idle one, never the session just opened.
		var wg sync.WaitGroup
		for _, key := range []string{"busy1", "busy2"} {
			cs := sdkClient(t, h, testToken, withSessions)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Hold", Arguments: map[string]any{"key": key}})
			}()
			started, _, _ := g.chans(key)
			receive(t, "call "+key+" to start", started)
		}
		c := newRaw(t, h)
		resp := c.request(context.Background(), "POST", initBody, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "2 sessions, the most allowed (--max-sessions), and none is idle") || resp.Header.Get("Retry-After") == "" {
			t.Errorf("a session over the cap with every session busy: %s %s", resp.Status, body)
		}
		for _, key := range []string{"busy1", "busy2"} {
			_, release, _ := g.chans(key)
			close(release)
		}
		wg.Wait()
		// Idle again: a new session gets in.
		c.initialize()
	})
}

// TestHTTP_session_cap_spares_a_session_being_created: a session whose
// initialize is still being answered (its client does not know its id
// yet) is not idle: a new session over the cap closes an idle one instead.
func TestHTTP_session_cap_spares_a_session_being_created(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{MaxSessions: 2})
	entered, release := make(chan struct{}), make(chan struct{})
	h.server.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p.ClientInfo != nil && p.ClientInfo.Name == "slow" {
				close(entered)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return next(ctx, method, req)
		}
	})
	ping := func(c *rawClient) int {
		resp := c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	idle := newRaw(t, h)
	idle.initialize()

	slow := newRaw(t, h)
	answered := make(chan *http.Response, 1)
	go func() {
		answered <- slow.request(context.Background(), "POST", strings.Replace(initBody, `"name":"raw"`, `"name":"slow"`, 1), nil)
	}()
	receive(t, "the slow initialize to be handled", entered)

	third := newRaw(t, h)
	third.initialize() // over the cap: closes a session
	close(release)
	resp := receive(t, "the slow initialize's answer", answered)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"protocolVersion"`) {
		t.Fatalf("the slow initialize: %s %s", resp.Status, body)
	}
	slow.session = resp.Header.Get("Mcp-Session-Id")
	if got := ping(slow); got != http.StatusOK {
		t.Fatalf("the session created while the cap was reached answers %d: it was closed instead of the idle one", got)
	}
	testbin.WaitFor(t, "the idle session to be closed", func() bool { return ping(idle) == http.StatusNotFound })
	if ping(third) != http.StatusOK {
		t.Fatal("the new session does not answer")
	}
}

package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

const otherToken = "other-token-0123456789"

// clientPrincipalHeader is the header that named a request's principal
// between the guard and the handlers before identity moved into the
// request's context: a client sending it gains nothing.
const clientPrincipalHeader = "X-Agent-Mcp-Principal"

// startToolsHTTP serves the built-in tools over HTTP on 127.0.0.1 with
// testToken (principal "default") and otherToken (principal "other"); it
// returns the endpoint and the working directory.
func startToolsHTTP(t *testing.T) (*HTTPServer, string) {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Name: "agent-mcp", Version: "test",
		Pipeline: &orchestrator.Pipeline{Pool: pool, Permit: permit.New(permit.Options{TrustHost: true})},
		Session:  tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := serveHTTP(t, srv, HTTPOptions{Addr: "127.0.0.1:0", Token: testToken,
		ClientTokens: []ClientToken{{Name: "other", Token: otherToken}}})
	return h, dir
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return resultText(res), res.IsError
}

var taskIDRE = regexp.MustCompile(`as task ([^ .]+)\.`)

// TestHTTP_sessionless_keeps_state_per_token: over HTTP a 2026-07-28
// client has no protocol session, each request served on its own; what a
// session keeps (files read, background tasks, persisted results) is kept
// for the token it sends, across requests and connections, and apart from
// other tokens and from protocol sessions.
func TestHTTP_sessionless_keeps_state_per_token(t *testing.T) {
	t.Parallel()
	h, dir := startToolsHTTP(t)
	ctx := context.Background()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := sdkClient(t, h, testToken, sessionless2026)

	// Read, then Edit in the next request: the file read is remembered.
	if text, isErr := call(t, cs, "Read", map[string]any{"file_path": file}); isErr || !strings.Contains(text, "1\talpha") {
		t.Fatalf("Read: %q (error %v)", text, isErr)
	}
	if text, isErr := call(t, cs, "Edit", map[string]any{"file_path": file, "old_string": "beta", "new_string": "gamma"}); isErr {
		t.Fatalf("Edit after Read, over two requests: %q", text)
	}
	if b, _ := os.ReadFile(file); string(b) != "alpha\ngamma\n" {
		t.Fatalf("the file after Edit: %q", b)
	}

	// A background task started in one request is read in the next.
	text, isErr := call(t, cs, "Bash", map[string]any{"command": "echo started; sleep 0.2; echo finished", "run_in_background": true})
	m := taskIDRE.FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("Bash in the background: %q (error %v)", text, isErr)
	}
	task := m[1]
	if text, isErr := call(t, cs, "TaskOutput", map[string]any{"task_id": task, "block": true}); isErr || !strings.Contains(text, "finished") {
		t.Fatalf("TaskOutput of %s: %q (error %v)", task, text, isErr)
	}

	// A large result is listed by resources/list and reads back whole.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "seq 1 20000"}})
	if err != nil || res.IsError {
		t.Fatalf("Bash seq: %v %+v", err, res)
	}
	link, ok := res.Content[len(res.Content)-1].(*mcp.ResourceLink)
	if !ok || !strings.HasPrefix(link.URI, orchestrator.ResultURIPrefix) {
		t.Fatalf("the large result's last block is %#v, want a resource link", res.Content[len(res.Content)-1])
	}
	listed := func(cs *mcp.ClientSession) bool {
		t.Helper()
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		for _, r := range list.Resources {
			if r.URI == link.URI {
				return true
			}
		}
		return false
	}
	if !listed(cs) {
		t.Fatalf("resources/list does not list %s", link.URI)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	if err != nil {
		t.Fatalf("reading %s: %v", link.URI, err)
	}
	if got := read.Contents[0].Text; int64(len(got)) != *link.Size || !strings.HasPrefix(got, "1\n2\n") || !strings.Contains(got, "\n19999\n20000") {
		t.Fatalf("%s holds %d bytes (the link says %d), ending %q", link.URI, len(got), *link.Size, got[max(0, len(got)-20):])
	}

	// Another connection with the same token is the same principal.
	again := sdkClient(t, h, testToken, sessionless2026)
	if !listed(again) {
		t.Errorf("a second connection with the same token does not list %s", link.URI)
	}
	if text, isErr := call(t, again, "TaskOutput", map[string]any{"task_id": task, "block": false}); isErr {
		t.Errorf("TaskOutput of %s from a second connection with the same token: %q", task, text)
	}

	// Another token, and a protocol session, have state of their own.
	for name, other := range map[string]*mcp.ClientSession{
		"another token":    sdkClient(t, h, otherToken, sessionless2026),
		"a 2025-11-25 one": sdkClient(t, h, testToken, withSessions),
	} {
		if listed(other) {
			t.Errorf("%s lists %s", name, link.URI)
		}
		if _, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI}); err == nil {
			t.Errorf("%s read %s", name, link.URI)
		}
		if text, isErr := call(t, other, "TaskOutput", map[string]any{"task_id": task, "block": false}); !isErr {
			t.Errorf("%s read task %s: %q", name, task, text)
		}
		if text, isErr := call(t, other, "Edit", map[string]any{"file_path": file, "old_string": "gamma", "new_string": "delta"}); !isErr || !strings.Contains(text, "has not been read") {
			t.Errorf("%s edited a file it has not read: %q (error %v)", name, text, isErr)
		}
	}
}

// TestHTTP_sessionless_state_expires: a token's state closes after the
// session timeout without a request (its background processes are killed
// with it: tools.Session.Close) and its directory goes.
func TestHTTP_sessionless_state_expires(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{SessionTimeout: 300 * time.Millisecond})
	cs := sdkClient(t, h, testToken, sessionless2026)
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "idle"}}); err != nil || res.IsError {
		t.Fatalf("Mark: %v %+v", err, res)
	}
	ts := receive(t, "the Mark call", g.sessions)
	dir := ts.StateDir()
	testbin.WaitFor(t, "the idle state to close", ts.Closed)
	testbin.WaitFor(t, "the state directory to be removed", func() bool { _, err := os.Stat(dir); return errors.Is(err, os.ErrNotExist) })
	// The next request starts afresh.
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "again"}}); err != nil || res.IsError {
		t.Fatalf("Mark after the state expired: %v %+v", err, res)
	}
	if next := receive(t, "the second Mark call", g.sessions); next == ts || next.Closed() {
		t.Fatal("the call after expiry ran in the closed state")
	}
}

// TestHTTP_sessionless_call_cap: the cap on calls in flight holds per
// token when there are no sessions.
func TestHTTP_sessionless_call_cap(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{MaxSessionCalls: 1, ClientTokens: []ClientToken{{Name: "other", Token: otherToken}}})
	cs := sdkClient(t, h, testToken, sessionless2026)
	held := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Hold", Arguments: map[string]any{"key": "held"}})
		held <- err
	}()
	started, release, _ := g.chans("held")
	receive(t, "the held call to start", started)
	again := sdkClient(t, h, testToken, sessionless2026)
	if _, err := again.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "same"}}); err == nil || !strings.Contains(err.Error(), "1 calls in flight") {
		t.Fatalf("a second call with the same token: err = %v, want the cap error", err)
	}
	other := sdkClient(t, h, otherToken, sessionless2026)
	if res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "other"}}); err != nil || res.IsError {
		t.Fatalf("another token's call: %v %+v", err, res)
	}
	<-g.sessions
	close(release)
	if err := receive(t, "the held call", held); err != nil {
		t.Fatal(err)
	}
}

// TestHTTP_sessionless_request_checks: requests without sessions pass the
// same Host, Origin and token checks, and a client cannot name a
// principal or use another token's session.
func TestHTTP_sessionless_request_checks(t *testing.T) {
	t.Parallel()
	h, g, _ := startHTTP(t, HTTPOptions{ClientTokens: []ClientToken{{Name: "other", Token: otherToken}}})
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	modern := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range modern {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"token", modern, 200},
		{"client_token", with(map[string]string{"Authorization": "Bearer " + otherToken}), 200},
		{"no_token", with(map[string]string{"Authorization": ""}), 401},
		{"wrong_token", with(map[string]string{"Authorization": "Bearer nope"}), 401},
		{"rebound_host", with(map[string]string{"Host": "evil.example.com"}), 403},
		{"foreign_origin", with(map[string]string{"Origin": "https://evil.example.com"}), 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := newRaw(t, h).request(context.Background(), "POST", list, tc.hdr)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || (tc.status == 200 && !strings.Contains(string(body), `"Hold"`)) {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tc.status)
			}
		})
	}

	t.Run("a_principal_header_from_the_client_is_ignored", func(t *testing.T) {
		mark := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Mark","arguments":{"key":"spoof"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		resp := newRaw(t, h).request(context.Background(), "POST", mark, with(map[string]string{
			"Mcp-Method": "tools/call", "Mcp-Name": "Mark", clientPrincipalHeader: "other"}))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "marked spoof") {
			t.Fatalf("Mark: %s %s", resp.Status, body)
		}
		ts := receive(t, "the Mark call", g.sessions)
		other := sdkClient(t, h, otherToken, sessionless2026)
		if res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "other"}}); err != nil || res.IsError {
			t.Fatalf("Mark with the other token: %v %+v", err, res)
		}
		if receive(t, "the other token's Mark call", g.sessions) == ts {
			t.Fatal("a request naming the principal \"other\" in a header ran in that principal's state")
		}
	})

	t.Run("a_principal_header_in_any_case_or_repeated_is_ignored", func(t *testing.T) {
		mark := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Mark","arguments":{"key":"variants"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, err := http.NewRequest("POST", h.URL, strings.NewReader(mark))
		if err != nil {
			t.Fatal(err)
		}
		// Keys as written on the wire: lower case, upper case and the
		// canonical spelling, some repeated.
		req.Header = http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Authorization": {"Bearer " + testToken}, "Mcp-Protocol-Version": {"2026-07-28"},
			"Mcp-Method": {"tools/call"}, "Mcp-Name": {"Mark"},
			"x-agent-mcp-principal": {"other"}, "X-AGENT-MCP-PRINCIPAL": {"other", "other"}, clientPrincipalHeader: {"other"},
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "marked variants") {
			t.Fatalf("Mark: %s %s", resp.Status, body)
		}
		ts := receive(t, "the Mark call", g.sessions)
		other := sdkClient(t, h, otherToken, sessionless2026)
		if res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "other"}}); err != nil || res.IsError {
			t.Fatalf("Mark with the other token: %v %+v", err, res)
		}
		if receive(t, "the other token's Mark call", g.sessions) == ts {
			t.Fatal("a request naming the principal \"other\" in headers of other cases ran in that principal's state")
		}
	})

	t.Run("a_principal_header_on_a_session_is_ignored", func(t *testing.T) {
		c := newRaw(t, h)
		c.initialize()
		resp := c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"Mark","arguments":{"key":"in-session"}}}`,
			map[string]string{clientPrincipalHeader: "other"})
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "marked in-session") {
			t.Fatalf("Mark: %s %s", resp.Status, body)
		}
		ts := receive(t, "the Mark call", g.sessions)
		other := sdkClient(t, h, otherToken, sessionless2026)
		if res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "Mark", Arguments: map[string]any{"key": "other"}}); err != nil || res.IsError {
			t.Fatalf("Mark with the other token: %v %+v", err, res)
		}
		if receive(t, "the other token's Mark call", g.sessions) == ts {
			t.Fatal("a session's request naming the principal \"other\" in a header ran in that principal's state")
		}
	})

	t.Run("a_session_is_bound_to_its_token", func(t *testing.T) {
		c := newRaw(t, h)
		c.initialize()
		resp := c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, map[string]string{"Authorization": "Bearer " + otherToken})
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("another token on the session got %s, want 403", resp.Status)
		}
		resp = c.request(context.Background(), "POST", `{"jsonrpc":"2.0","id":4,"method":"ping"}`, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the session's own token got %s", resp.Status)
		}
	})
}

// TestHTTP_server_discover_offers_2026_07_28: the discover answer over
// HTTP offers the newest protocol, as over stdio.
func TestHTTP_server_discover_offers_2026_07_28(t *testing.T) {
	t.Parallel()
	h, _, _ := startHTTP(t, HTTPOptions{})
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp := newRaw(t, h).request(context.Background(), "POST", discover, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"supportedVersions":["2026-07-28"`) || !strings.Contains(string(body), `"2025-11-25"`) {
		t.Fatalf("server/discover: %s %s", resp.Status, body)
	}
}

func TestListenHTTP_refuses_bad_client_tokens(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	for _, tc := range []struct {
		name   string
		tokens []ClientToken
		noAuth bool
		want   string
	}{
		{"no_name", []ClientToken{{Token: otherToken}}, false, "expected NAME=TOKEN"},
		{"short_token", []ClientToken{{Name: "ci", Token: "short"}}, false, "at least 16 characters"},
		{"default_name", []ClientToken{{Name: defaultPrincipal, Token: otherToken}}, false, "is taken"},
		{"repeated_name", []ClientToken{{Name: "ci", Token: otherToken}, {Name: "ci", Token: otherToken + "x"}}, false, "is taken"},
		{"same_as_token", []ClientToken{{Name: "ci", Token: testToken}}, false, "the same token as default"},
		{"with_no_auth", []ClientToken{{Name: "ci", Token: otherToken}}, true, "cannot be used with --no-auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := HTTPOptions{Addr: "127.0.0.1:0", Token: testToken, ClientTokens: tc.tokens, NoAuth: tc.noAuth}
			if tc.noAuth {
				opts.Token = ""
			}
			h, err := srv.ListenHTTP(opts)
			if err == nil {
				h.ln.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ListenHTTP = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestHTTP_sessionless_round_trips: a call that needs the user's answer
// runs across two requests without a session (multi round-trip): the
// retry with the answer resumes it when it carries the same token, and
// another token's retry is refused without ending the call.
func TestHTTP_sessionless_round_trips(t *testing.T) {
	t.Parallel()
	h, _ := startToolsHTTP(t)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	const args = `"arguments":{"questions":[{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"Relational"},{"label":"SQLite","description":"Embedded"}]}]}`
	hdr := func(token string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "AskUserQuestion", "Authorization": "Bearer " + token}
	}
	post := func(token, body string) map[string]any {
		t.Helper()
		resp := newRaw(t, h).request(context.Background(), "POST", body, hdr(token))
		defer resp.Body.Close()
		// A JSON-RPC error comes as JSON with a 4xx status, a result on
		// an event stream.
		data, _ := io.ReadAll(resp.Body)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			ev, err := readEvent(bufio.NewReader(bytes.NewReader(data)))
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			data = []byte(ev.data)
		}
		var msg map[string]any
		if err := json.Unmarshal(data, &msg); err != nil {
			t.Fatalf("POST: %s %q: %v", resp.Status, data, err)
		}
		return msg
	}
	first := post(testToken, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"AskUserQuestion",`+args+`,`+meta+`}}`)
	res, _ := first["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	inputs, _ := res["inputRequests"].(map[string]any)
	if state == "" || len(inputs) != 1 {
		t.Fatalf("the first answer is not input-required: %v", first)
	}
	var id string
	for k := range inputs {
		id = k
	}
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"AskUserQuestion",` + args + `,"requestState":"` + state +
		`","inputResponses":{"` + id + `":{"action":"accept","content":{"q1":"SQLite"}}},` + meta + `}}`
	if got := post(otherToken, retry); got["error"] == nil || !strings.Contains(fmt.Sprint(got["error"]), "requestState is unknown or expired") {
		t.Fatalf("another token's retry: %v", got)
	}
	got := post(testToken, retry)
	if !strings.Contains(fmt.Sprint(got["result"]), `"Which database?"="SQLite"`) {
		t.Fatalf("the retry with the answer: %v", got)
	}
}

// TestHTTP_identity_travels_in_the_context: what the handlers learn of a
// request's principal and POST comes from the TokenInfo the guard's
// verifier put in the request's context, whatever headers the client
// sent: a principal or POST tag named in a header is not read, and with
// --no-auth the client's own Authorization header reaches the handlers
// as sent (the token shown to the auth middleware is put back).
func TestHTTP_identity_travels_in_the_context(t *testing.T) {
	t.Parallel()
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tc := range []struct {
		name      string
		opts      HTTPOptions
		token     string
		principal string
	}{
		{"token", HTTPOptions{ClientTokens: []ClientToken{{Name: "other", Token: otherToken}}}, testToken, defaultPrincipal},
		{"client_token", HTTPOptions{ClientTokens: []ClientToken{{Name: "other", Token: otherToken}}}, otherToken, "other"},
		{"no_auth", HTTPOptions{NoAuth: true}, "client-sent", anonymousPrincipal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _, _ := startHTTP(t, tc.opts)
			type seen struct {
				principal, post, auth string
				userID                string
			}
			got := make(chan seen, 4)
			h.server.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/list" {
						ex := req.GetExtra()
						s := seen{principal: principalOf(ex), post: postTagOf(req), auth: ex.Header.Get("Authorization")}
						if ex.TokenInfo != nil {
							s.userID = ex.TokenInfo.UserID
						}
						got <- s
					}
					return next(ctx, method, req)
				}
			})
			c := newRaw(t, h)
			c.token = tc.token
			resp := c.request(context.Background(), "POST", list, map[string]string{
				"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list",
				clientPrincipalHeader: "spoofed", "X-Agent-Mcp-Post": "forged-post"})
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("tools/list: %s %s", resp.Status, body)
			}
			if resp.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("an accepted request's answer carries a challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
			s := receive(t, "the tools/list request", got)
			if s.principal != tc.principal || s.userID != tc.principal {
				t.Errorf("principal %q (TokenInfo.UserID %q), want %q", s.principal, s.userID, tc.principal)
			}
			if s.post == "" || s.post == "forged-post" {
				t.Errorf("POST tag %q: want the guard's own", s.post)
			}
			if want := "Bearer " + tc.token; s.auth != want {
				t.Errorf("the handlers saw Authorization %q, want the client's %q", s.auth, want)
			}
		})
	}
}

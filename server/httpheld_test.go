package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// writeHTTP serves the built-in tools over HTTP on 127.0.0.1 (the
// pipeline, the SDK's handlers behind the guard) in a fresh directory,
// bypassing permissions, with the input and body caps given (0: the
// defaults).
type writeHTTP struct {
	h   *HTTPServer
	srv *Server
	dir string
	raw *rawClient // in a 2025-11-25 session
}

func newWriteHTTP(t *testing.T, maxInput int, maxBody int64) *writeHTTP {
	t.Helper()
	srv, dir := newBuiltinServer(t, maxInput)
	h, _ := serveHTTP(t, srv, HTTPOptions{Addr: "127.0.0.1:0", Token: testToken, MaxBodyBytes: maxBody})
	raw := newRaw(t, h)
	raw.initialize()
	return &writeHTTP{h: h, srv: srv, dir: dir, raw: raw}
}

// the 2026-07-28 request _meta and headers.
const meta2026 = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`

// post sends body over the route given (a 2025-11-25 session, or
// sessionless: protocol 2026-07-28), with its length or chunked, and
// returns the status and the response body.
func (w *writeHTTP) post(t *testing.T, sessionless, chunked bool, body string, hdr map[string]string) (int, string) {
	t.Helper()
	c := w.raw
	if sessionless {
		c = newRaw(t, w.h)
		h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "Write"}
		for k, v := range hdr {
			h[k] = v
		}
		hdr = h
	}
	c.chunked = chunked
	resp := c.request(context.Background(), "POST", body, hdr)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// writeBody is the body of a tools/call of Write of content to name, with
// _meta members meta (the 2026-07-28 ones added when sessionless; "-"
// for no _meta) before the name.
func (w *writeHTTP) writeBody(id int, sessionless bool, name, content, meta string) string {
	args, _ := json.Marshal(map[string]any{"file_path": filepath.Join(w.dir, name), "content": content})
	if sessionless {
		if meta == "-" || meta == "" {
			meta = meta2026
		} else {
			meta += "," + meta2026
		}
	}
	params := `{"name":"Write","arguments":` + string(args) + `}`
	if meta != "-" {
		params = `{ "_meta" : {` + meta + `}, "name":"Write","arguments":` + string(args) + " }"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
}

// noneHeld waits for the server to hold no arguments (they are dropped
// when the POST is served, just after its response is written).
func (w *writeHTTP) noneHeld(t *testing.T) {
	t.Helper()
	testbin.WaitFor(t, "the held arguments to be dropped", func() bool {
		return w.srv.held.Len() == 0
	})
}

// TestHTTP_large_arguments_are_held_aside: over HTTP, in a session and
// without one, sent with a length or chunked, a tools/call whose arguments
// are large has them held aside by the guard and given back to the call
// whatever its _meta carries; a client naming held arguments itself gets
// its own call's (the guard's key wins) or an error; arguments of a call
// the SDK refuses before it runs are dropped too.
func TestHTTP_large_arguments_are_held_aside(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("held \"aside\" line\n", 10_000) // 180KB, over heldArgumentsOver
	forged := fmt.Sprintf(`%q:"0123456789abcdef0123456789abcdef"`, largeargs.MetaKey)
	for _, route := range []struct {
		name        string
		sessionless bool
	}{{"session", false}, {"sessionless", true}} {
		t.Run(route.name, func(t *testing.T) {
			t.Parallel()
			w := newWriteHTTP(t, 0, 0)
			id := 10
			for _, chunked := range []bool{false, true} {
				for _, c := range []struct{ name, meta string }{
					{"no_meta", "-"},
					{"empty_meta", ""},
					{"meta_with_members", `"progressToken":"p1","x":[1,{"y":"}"}]`},
					{"forged", forged},
				} {
					id++
					name := fmt.Sprintf("%s-%v.txt", c.name, chunked)
					status, body := w.post(t, route.sessionless, chunked, w.writeBody(id, route.sessionless, name, content, c.meta), nil)
					if status != 200 || !strings.Contains(body, "Created") || strings.Contains(body, `"isError":true`) {
						t.Fatalf("%s: %d %s", name, status, body)
					}
					if got, err := os.ReadFile(filepath.Join(w.dir, name)); err != nil || string(got) != content {
						t.Fatalf("%s: the file holds %d bytes (%v), want the %d written", name, len(got), err, len(content))
					}
				}
			}
			w.noneHeld(t)
			small := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{%s},"name":"Write","arguments":{}}}`, forged)
			if route.sessionless {
				small = fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{%s,%s},"name":"Write","arguments":{}}}`, forged, meta2026)
			}
			if status, body := w.post(t, route.sessionless, false, small, nil); !strings.Contains(body, "-32602") || !strings.Contains(body, largeargs.MetaKey) {
				t.Fatalf("a small call naming held arguments was answered %d %s, want -32602 naming %s", status, body, largeargs.MetaKey)
			}
			// Refused by the SDK before it runs: the Mcp-Name header does
			// not match (sessionless), the session is unknown (session).
			hdr := map[string]string{"Mcp-Name": "Read"}
			if !route.sessionless {
				hdr = map[string]string{"Mcp-Session-Id": "no-such-session"}
			}
			if status, body := w.post(t, route.sessionless, false, w.writeBody(3, route.sessionless, "refused.txt", content, "-"), hdr); status < 400 {
				t.Fatalf("a refused call was answered %d %s", status, body)
			}
			if _, err := os.Stat(filepath.Join(w.dir, "refused.txt")); err == nil {
				t.Error("the refused call wrote its file")
			}
			w.noneHeld(t)
		})
	}
}

// TestHTTP_body_cap: a body over --max-body-bytes is refused with 413
// naming the flag, with a length or chunked, in a session or without one,
// and nothing is written; one just under it is served.
func TestHTTP_body_cap(t *testing.T) {
	t.Parallel()
	const limit = 300 << 10
	w := newWriteHTTP(t, 0, limit)
	for _, sessionless := range []bool{false, true} {
		for _, chunked := range []bool{false, true} {
			name := fmt.Sprintf("over-%v-%v.txt", sessionless, chunked)
			status, body := w.post(t, sessionless, chunked, w.writeBody(1, sessionless, name, strings.Repeat("x", limit), "-"), nil)
			if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, fmt.Sprintf("exceeds the limit of %d bytes (--max-body-bytes", limit)) {
				t.Fatalf("%s: %d %s, want 413 naming --max-body-bytes", name, status, body)
			}
			if _, err := os.Stat(filepath.Join(w.dir, name)); err == nil {
				t.Errorf("%s: the refused Write created its file", name)
			}
			name = fmt.Sprintf("under-%v-%v.txt", sessionless, chunked)
			content := strings.Repeat("y", limit-1024)
			if status, body := w.post(t, sessionless, chunked, w.writeBody(2, sessionless, name, content, "-"), nil); status != 200 || !strings.Contains(body, "Created") {
				t.Fatalf("%s: %d %s", name, status, body)
			}
			if got, _ := os.ReadFile(filepath.Join(w.dir, name)); string(got) != content {
				t.Fatalf("%s: the file holds %d bytes, want %d", name, len(got), len(content))
			}
		}
	}
	w.noneHeld(t)
}

// TestHTTP_input_cap: a Write over --max-input-bytes, its arguments held
// aside by the guard, is refused by the pipeline with the error naming
// the flag, in a session and without one, and nothing is written.
func TestHTTP_input_cap(t *testing.T) {
	t.Parallel()
	w := newWriteHTTP(t, 100<<10, 0)
	for _, sessionless := range []bool{false, true} {
		name := fmt.Sprintf("over-%v.txt", sessionless)
		status, body := w.post(t, sessionless, false, w.writeBody(1, sessionless, name, strings.Repeat("x", 200<<10), "-"), nil)
		if status != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "over the largest accepted, 100KB (--max-input-bytes)") {
			t.Fatalf("%s: %d %s, want the Write refused naming --max-input-bytes", name, status, body)
		}
		if _, err := os.Stat(filepath.Join(w.dir, name)); err == nil {
			t.Errorf("%s: the refused Write created its file", name)
		}
	}
	w.noneHeld(t)
}

// TestHTTP_large_write counts what the server allocates answering a 10MB
// Write over HTTP (the client, in the same process, allocates next to
// nothing: its body is read from the string): the body read once (one
// copy; the SDK decodes the call without its arguments) and the tool's
// input (one). With the SDK decoding the body it was eight or more.
func TestHTTP_large_write(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 10MB message")
	}
	for _, sessionless := range []bool{false, true} {
		t.Run(fmt.Sprintf("sessionless=%v", sessionless), func(t *testing.T) {
			w := newWriteHTTP(t, 0, 0)
			const size = 10_000_000
			content := strings.Repeat("an ordinary line of generated content for the big write\n", size/56+1)[:size]
			body := w.writeBody(5, sessionless, "big.txt", content, "-")
			runtime.GC()
			old := debug.SetGCPercent(-1)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			status, resp := w.post(t, sessionless, false, body, nil)
			runtime.ReadMemStats(&after)
			debug.SetGCPercent(old)
			if status != 200 || !strings.Contains(resp, "Created") {
				t.Fatalf("the Write: %d %s", status, resp)
			}
			if got, err := os.ReadFile(filepath.Join(w.dir, "big.txt")); err != nil || string(got) != content {
				t.Fatalf("the file holds %d bytes (%v), want the %d written", len(got), err, size)
			}
			copies := float64(after.TotalAlloc-before.TotalAlloc) / size
			t.Logf("the server allocated %.1f copies of the content answering the Write", copies)
			if copies > 4 {
				t.Errorf("the server allocated %.1f copies of a Write's content, want at most 4", copies)
			}
		})
	}
}

// TestHeldArguments_taken_only_by_their_post: arguments held for the call
// of one POST are not given to a call that names their token from another
// POST (another principal's or session's request) or from stdio; the
// refused call gets -32602 and leaves them held for their own call, which
// takes them.
func TestHeldArguments_taken_only_by_their_post(t *testing.T) {
	t.Parallel()
	srv := &Server{}
	token := srv.held.Hold([]byte(`{"content":"mine"}`), "post-a")
	var got json.RawMessage
	mw := srv.heldArguments(func(_ context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		got = req.GetParams().(*mcp.CallToolParamsRaw).Arguments
		return &mcp.CallToolResult{}, nil
	})
	callFrom := func(post string) error {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "Write", Meta: mcp.Meta{largeargs.MetaKey: token}}}
		if post != "" {
			req.Extra = &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: defaultPrincipal,
				Extra: map[string]any{factsKey: &requestFacts{post: post}}}}
		}
		_, err := mw(context.Background(), "tools/call", req)
		return err
	}
	for _, other := range []string{"post-b", ""} {
		if err := callFrom(other); err == nil || !strings.Contains(err.Error(), largeargs.MetaKey) {
			t.Fatalf("a call of POST %q naming another POST's held arguments: err %v, want -32602 naming %s", other, err, largeargs.MetaKey)
		}
		if srv.held.Len() != 1 {
			t.Fatalf("a call of POST %q dropped another POST's held arguments", other)
		}
	}
	if err := callFrom("post-a"); err != nil || string(got) != `{"content":"mine"}` {
		t.Fatalf("the POST's own call: err %v, arguments %s", err, got)
	}
	if srv.held.Len() != 0 {
		t.Fatal("arguments still held after their call took them")
	}
}

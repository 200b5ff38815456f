package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// formAsker answers every form with its answer, noting the messages.
type formAsker struct {
	answer tools.Answer
	err    error
	asked  []string
}

func (a *formAsker) Ask(_ context.Context, message string, _ map[string]any) (tools.Answer, error) {
	a.asked = append(a.asked, message)
	return a.answer, a.err
}

// TestAnswerInputs: an upstream task's input requests are answered as
// chat can: a form through the asker (declined when nobody can be asked),
// roots with the call's directory, anything else an error naming it; keys
// already answered are skipped; the server's text is shown as its own.
func TestAnswerInputs(t *testing.T) {
	t.Parallel()
	form := `{"method":"elicitation/create","params":{"message":"Delete x?\n\u001b[2Jnow","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}`
	session, err := tools.NewSession(tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	for _, tc := range []struct {
		name    string
		reqs    map[string]string
		skip    map[string]bool
		asker   *formAsker
		want    string // the answers as JSON
		wantErr string
	}{
		{name: "form_accepted", reqs: map[string]string{"q": form},
			asker: &formAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"ok": true}}},
			want:  `{"q":{"action":"accept","content":{"ok":true}}}`},
		{name: "form_declined_keeps_no_content", reqs: map[string]string{"q": form},
			asker: &formAsker{answer: tools.Answer{Action: "decline", Content: map[string]any{"ok": true}}},
			want:  `{"q":{"action":"decline"}}`},
		{name: "nobody_to_ask_declines", reqs: map[string]string{"q": form},
			asker: &formAsker{err: fmt.Errorf("chat -p: %w", tools.ErrNobodyToAsk)}, want: `{"q":{"action":"decline"}}`},
		{name: "no_asker_declines", reqs: map[string]string{"q": form}, want: `{"q":{"action":"decline"}}`},
		{name: "answered_keys_skipped", reqs: map[string]string{"q": form}, skip: map[string]bool{"q": true},
			asker: &formAsker{answer: tools.Answer{Action: "accept"}}, want: `{}`},
		{name: "roots_are_the_call_directory", reqs: map[string]string{"r": `{"method":"roots/list","params":{}}`},
			want: fmt.Sprintf(`{"r":{"roots":[{"name":%q,"uri":"file://%s"}]}}`, baseName(session.Cwd()), session.Cwd())},
		{name: "sampling_is_refused", reqs: map[string]string{"s": `{"method":"sampling/createMessage","params":{}}`},
			wantErr: `asks for sampling/createMessage (input request "s")`},
		{name: "url_mode_is_refused", reqs: map[string]string{"u": `{"method":"elicitation/create","params":{"mode":"url","message":"open","url":"https://example.com"}}`},
			wantErr: `in url mode (input request "u")`},
		{name: "undecodable_request", reqs: map[string]string{"b": `[1]`}, wantErr: `input request "b" does not decode`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reqs := map[string]json.RawMessage{}
			for k, v := range tc.reqs {
				reqs[k] = json.RawMessage(v)
			}
			uc := &tools.UseContext{Session: session}
			if tc.asker != nil {
				uc.Asker = tc.asker
			}
			got, err := answerInputs(context.Background(), uc, "up", reqs, tc.skip)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(got); string(b) != tc.want {
				t.Errorf("answers = %s, want %s", b, tc.want)
			}
			if tc.asker != nil && len(tc.asker.asked) > 0 {
				if m := tc.asker.asked[0]; !strings.HasPrefix(m, "MCP server up asks:\nDelete x?\n") || strings.Contains(m, "\x1b") {
					t.Errorf("the form's message = %q", m)
				}
			}
		})
	}
}

func baseName(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// TestHTTPCaller: a request of chat's own over HTTP carries the routing
// headers, reads its response from JSON or from an event stream (handing
// the progress notifications before it on), and reports the server's
// JSON-RPC error as one.
func TestHTTPCaller(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		id, _ := json.Marshal(req.ID)
		if r.Header.Get("Mcp-Method") != req.Method || r.Header.Get("Mcp-Protocol-Version") != "2026-07-28" {
			http.Error(w, "headers: "+fmt.Sprint(r.Header), http.StatusBadRequest)
			return
		}
		switch req.Method {
		case "tasks/get":
			if r.Header.Get("Mcp-Name") != "t1" {
				http.Error(w, "Mcp-Name: "+r.Header.Get("Mcp-Name"), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1,\"message\":\"half\"}}\n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"status\":\"working\"}}\n\n", id)
		case "tasks/cancel":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Task not found"}}`, id)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"ok":true}}`, id)
		}
	}))
	t.Cleanup(srv.Close)
	var progress []string
	h := &httpCaller{url: srv.URL, client: srv.Client(), version: "2026-07-28",
		onProgress: func(p *mcp.ProgressNotificationParams) { progress = append(progress, p.Message) }}
	ctx := context.Background()
	res, err := h.call(ctx, "tasks/get", map[string]any{"taskId": "t1"})
	if err != nil || string(res) != `{"status":"working"}` || strings.Join(progress, ",") != "half" {
		t.Errorf("tasks/get over an event stream: %s, %v, progress %v", res, err, progress)
	}
	res, err = h.call(ctx, "tools/call", map[string]any{"name": "x"})
	if err != nil || string(res) != `{"ok":true}` {
		t.Errorf("tools/call as JSON: %s, %v", res, err)
	}
	_, err = h.call(ctx, "tasks/cancel", map[string]any{"taskId": "t1"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32602 {
		t.Errorf("a JSON-RPC error: %v", err)
	}
}

package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
)

// TestResults_text_by_default_structured_on_request: hosts show the model
// structuredContent instead of the text when it is there, so it is off
// unless asked for; either way a persisted result's preview reaches the
// model, in the text and (when on) in the structured form.
func TestResults_text_by_default_structured_on_request(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		structured bool
		args       map[string]any
		persisted  bool
		want       string // structuredContent as JSON; "" for none
	}{
		{"inline, default", false, map[string]any{"size": 500}, false, ""},
		{"persisted, default", false, map[string]any{"size": 5000, "echo": true}, true, ""},
		{"inline, structured", true, map[string]any{"size": 500}, false, `{"size":500}`},
		{"persisted small output, structured", true, map[string]any{"size": 5000}, true, "small+preview"},
		{"persisted large output, structured", true, map[string]any{"size": 5000, "echo": true}, true, "preview"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, cs := connectWith(t, tc.structured, testTools(nil), nil)
			ctx := context.Background()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range list.Tools {
				if tl.OutputSchema != nil {
					t.Errorf("%s declares an outputSchema", tl.Name)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Big", Arguments: tc.args})
			if err != nil || res.IsError {
				t.Fatalf("Big: %v %+v", err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if tc.persisted {
				if len(res.Content) != 2 || !strings.HasPrefix(text, "<persisted-output>\n") || !strings.Contains(text, "Preview (first 2KB):\nyyyy") {
					t.Errorf("content = %d blocks, first %q", len(res.Content), text)
				}
				if link, ok := res.Content[len(res.Content)-1].(*mcp.ResourceLink); !ok || !strings.HasPrefix(link.URI, orchestrator.ResultURIPrefix) {
					t.Errorf("last block = %#v, want the resource link", res.Content[len(res.Content)-1])
				}
			} else if len(res.Content) != 1 || len(text) != 500 {
				t.Errorf("content = %d blocks, first of %d chars", len(res.Content), len(text))
			}
			sc, _ := json.Marshal(res.StructuredContent)
			switch tc.want {
			case "":
				if res.StructuredContent != nil {
					t.Errorf("structuredContent = %s, want none", sc)
				}
			case "small+preview":
				var got struct {
					Size      int `json:"size"`
					Persisted struct {
						Preview      string `json:"preview"`
						OriginalSize int    `json:"originalSize"`
						URI          string `json:"uri"`
					} `json:"persistedOutput"`
				}
				if err := json.Unmarshal(sc, &got); err != nil || got.Size != 5000 || !strings.HasPrefix(got.Persisted.Preview, "yyyy") ||
					len(got.Persisted.Preview) > 2000 || got.Persisted.OriginalSize != 5000 || !strings.HasPrefix(got.Persisted.URI, orchestrator.ResultURIPrefix) {
					t.Errorf("structuredContent = %.400s", sc)
				}
			case "preview":
				var got struct {
					Preview      string `json:"preview"`
					OriginalSize int    `json:"originalSize"`
					Truncated    bool   `json:"truncated"`
					URI          string `json:"persistedOutputUri"`
				}
				if err := json.Unmarshal(sc, &got); err != nil || !strings.HasPrefix(got.Preview, "yyyy") || len(got.Preview) > 2000 ||
					got.OriginalSize != 5000 || !got.Truncated || !strings.HasPrefix(got.URI, orchestrator.ResultURIPrefix) {
					t.Errorf("structuredContent = %.300s", sc)
				}
			default:
				if string(sc) != tc.want {
					t.Errorf("structuredContent = %s, want %s", sc, tc.want)
				}
			}
		})
	}
}

// TestResources_list_persisted_results: a session's persisted results are
// listed by resources/list, each readable, the client is told the list
// changed, no other session sees them, and they go when the session ends.
func TestResources_list_persisted_results(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 10)
	srv, cs := connect(t, testTools(nil), &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	empty, err := cs.ListResources(ctx, nil)
	if err != nil || len(empty.Resources) != 0 {
		t.Fatalf("before any call: %v %+v", err, empty)
	}
	links := map[string]*mcp.ResourceLink{}
	for _, size := range []int{5000, 7000} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Big", Arguments: map[string]any{"size": size}})
		if err != nil || res.IsError {
			t.Fatalf("Big: %v %+v", err, res)
		}
		link := res.Content[1].(*mcp.ResourceLink)
		links[link.URI] = link
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Big", Arguments: map[string]any{"size": 10}}); err != nil {
		t.Fatal(err)
	}
	<-changed // the SDK debounces, so one notification may stand for both
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 2 {
		t.Fatalf("listed %d resources, want the 2 persisted results: %+v", len(list.Resources), list.Resources)
	}
	for _, r := range list.Resources {
		link := links[r.URI]
		if link == nil || r.Name != link.Name || r.Size != *link.Size || r.MIMEType != "text/plain" {
			t.Errorf("resource %+v matches no link of %v", r, links)
			continue
		}
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil || int64(len(read.Contents[0].Text)) != r.Size {
			t.Errorf("reading %s: %v", r.URI, err)
		}
	}

	other := connectClient(t, srv, nil)
	if _, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "Big", Arguments: map[string]any{"size": 10}}); err != nil {
		t.Fatal(err)
	}
	if l, err := other.ListResources(ctx, nil); err != nil || len(l.Resources) != 0 {
		t.Errorf("another session lists %v %+v", err, l)
	}
	for uri := range links {
		if _, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("another session read %s", uri)
		}
	}

	cs.Close()
	testbin.WaitFor(t, "the session's results to be unregistered once it ended", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.resultOwner) == 0
	})
}

// TestHostInjectedParameters: a parameter a known host adds to every call
// is ignored; any other unknown one is still refused by name.
func TestHostInjectedParameters(t *testing.T) {
	t.Parallel()
	_, cs := connect(t, testTools(nil), nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		args    map[string]any
		wantErr string
	}{
		{"Gemini CLI's wait_for_previous", map[string]any{"size": 3, "wait_for_previous": true}, ""},
		{"wait_for_previous false", map[string]any{"wait_for_previous": false, "size": 3}, ""},
		{"another unknown parameter", map[string]any{"size": 3, "wait_for_next": true}, `unknown parameter "wait_for_next"`},
		{"both", map[string]any{"size": 3, "wait_for_previous": true, "bogus": 1}, `unknown parameter "bogus"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Big", Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if tc.wantErr == "" {
				if res.IsError || text != "yyy" {
					t.Errorf("result = %v %q", res.IsError, text)
				}
				return
			}
			if !res.IsError || !strings.Contains(text, tc.wantErr) || strings.Contains(text, "wait_for_previous") {
				t.Errorf("result = %v %q, want an error naming only %s", res.IsError, text, tc.wantErr)
			}
		})
	}
}

func TestWithoutHostParams_keeps_other_bytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"command":"echo <a&b>","wait_for_previous":true}`, `{"command":"echo <a&b>"}`},
		{`{"wait_for_previous":true}`, `{}`},
		{`{"command":"wait_for_previous"}`, `{"command":"wait_for_previous"}`},
		{`not json wait_for_previous`, `not json wait_for_previous`},
		{`{"a":1}`, `{"a":1}`},
	} {
		if got := string(withoutHostParams(json.RawMessage(tc.in), nil)); got != tc.want {
			t.Errorf("withoutHostParams(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := string(withoutHostParams(json.RawMessage(`{"wait_for_previous":1}`), map[string]bool{"wait_for_previous": true})); got != `{"wait_for_previous":1}` {
		t.Errorf("a declared parameter was dropped: %s", got)
	}
}

// TestTodoWriteResult is TodoWrite's result as docs/tools.md §8 and §1
// give it: one line of text; with structured output also the list before
// and after; no outputSchema either way.
func TestTodoWriteResult(t *testing.T) {
	t.Parallel()
	todos := []any{map[string]any{"content": "Parse", "activeForm": "Parsing", "status": "in_progress"}}
	for _, structured := range []bool{false, true} {
		_, cs := connectWith(t, structured, nil, nil)
		ctx := context.Background()
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			if tl.Name == "TodoWrite" && tl.OutputSchema != nil {
				t.Errorf("structured %v: TodoWrite declares an outputSchema", structured)
			}
		}
		for i := range 2 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TodoWrite", Arguments: map[string]any{"todos": todos}})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("TodoWrite: %v %+v", err, res)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; text != "The todo list was updated. Keep using it to track your progress, and carry on with the current task." {
				t.Errorf("text = %q", text)
			}
			b, _ := json.Marshal(res.StructuredContent)
			want := "null"
			if structured {
				old := `[]`
				if i == 1 {
					old = `[{"activeForm":"Parsing","content":"Parse","status":"in_progress"}]`
				}
				// The client decodes it into a map: keys come sorted.
				want = `{"newTodos":[{"activeForm":"Parsing","content":"Parse","status":"in_progress"}],"oldTodos":` + old + `}`
			}
			if string(b) != want {
				t.Errorf("structured %v, call %d: structuredContent = %s, want %s", structured, i+1, b, want)
			}
		}
	}
}

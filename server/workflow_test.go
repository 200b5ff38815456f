//lint:file-ignore SA1019 these tests drive MCP sampling, deprecated by SEP-2577 and kept during its deprecation window (sampling.go says why)

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// workflowServer serves the built-in tools with the real Permitter (so plan
// mode is enforced) over in-memory transports; it returns the client
// session and the session's working directory.
func workflowServer(t *testing.T, opts *mcp.ClientOptions) (*mcp.ClientSession, string) {
	return workflowServerAt(t, "", opts)
}

// protocolVersions are the versions the elicitation and sampling tests run
// at: the latest, where the server's requests travel as input-required
// results (multi round-trip), and an older one, where the server sends
// elicitation and sampling requests while it serves the call.
var protocolVersions = []string{"2026-07-28", "2025-11-25"}

func workflowServerAt(t *testing.T, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, string) {
	return serverWith(t, version, builtin.Options{}, opts)
}

func serverWith(t *testing.T, version string, toolOpts builtin.Options, opts *mcp.ClientOptions) (*mcp.ClientSession, string) {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	pool, err := orchestrator.AssemblePool(builtin.Tools(toolOpts), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Name: "agent-mcp", Version: "test",
		Pipeline: &orchestrator.Pipeline{Pool: pool, Permit: permit.New(permit.Options{TrustHost: true})},
		Session:  tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir()},
		// These tests check the structured outputs of the workflow tools.
		StructuredOutput: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "workflow-client", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, dir
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// elicitations answers elicitation requests from a script keyed by a word
// of the message, and records the messages.
type elicitations struct {
	mu       sync.Mutex
	messages []string
	answers  map[string]*mcp.ElicitResult
}

func (e *elicitations) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.messages = append(e.messages, req.Params.Message)
	for key, ans := range e.answers {
		if strings.Contains(req.Params.Message, key) {
			return ans, nil
		}
	}
	return &mcp.ElicitResult{Action: "cancel"}, nil
}

func TestAskUserQuestion_through_elicitation(t *testing.T) {
	t.Parallel()
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			el := &elicitations{answers: map[string]*mcp.ElicitResult{
				"Which database?": {Action: "accept", Content: map[string]any{"q1": "SQLite", "q2": []any{"Auth", "Export"}}},
			}}
			cs, _ := workflowServerAt(t, version, &mcp.ClientOptions{ElicitationHandler: el.handle})
			res := callTool(t, cs, "AskUserQuestion", map[string]any{"questions": []any{
				map[string]any{"question": "Which database?", "header": "Database", "options": []any{
					map[string]any{"label": "Postgres", "description": "Relational"},
					map[string]any{"label": "SQLite", "description": "Embedded"},
				}},
				map[string]any{"question": "Which features?", "header": "Features", "multiSelect": true, "options": []any{
					map[string]any{"label": "Auth", "description": "Log in"},
					map[string]any{"label": "Export", "description": "CSV"},
				}},
			}})
			want := `The user answered your questions: "Which database?"="SQLite", "Which features?"="Auth, Export". Carry on with these answers in mind.`
			if res.IsError || resultText(res) != want {
				t.Errorf("result (error %v): %s", res.IsError, resultText(res))
			}
		})
	}
}

func TestAskUserQuestion_client_without_elicitation(t *testing.T) {
	t.Parallel()
	cs, _ := workflowServer(t, nil)
	res := callTool(t, cs, "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which?", "header": "H", "options": []any{
			map[string]any{"label": "a", "description": ""}, map[string]any{"label": "b", "description": ""},
		}},
	}})
	if !res.IsError || !strings.Contains(resultText(res), "does not support MCP elicitation") {
		t.Errorf("result (error %v): %s", res.IsError, resultText(res))
	}
}

func TestPlanMode_through_elicitation(t *testing.T) {
	t.Parallel()
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			el := &elicitations{answers: map[string]*mcp.ElicitResult{
				"approve this plan": {Action: "accept", Content: map[string]any{"approve": true}},
			}}
			cs, dir := workflowServerAt(t, version, &mcp.ClientOptions{ElicitationHandler: el.handle})
			target := filepath.Join(dir, "out.txt")
			write := map[string]any{"file_path": target, "content": "hello\n"}

			if res := callTool(t, cs, "EnterPlanMode", map[string]any{}); res.IsError || !strings.Contains(resultText(res), "Plan mode is on") {
				t.Fatalf("EnterPlanMode: %s", resultText(res))
			}
			if res := callTool(t, cs, "Write", write); !res.IsError || !strings.Contains(resultText(res), "plan mode") {
				t.Errorf("Write in plan mode (error %v): %s", res.IsError, resultText(res))
			}
			if _, err := os.Stat(target); err == nil {
				t.Fatal("the file was written in plan mode")
			}
			res := callTool(t, cs, "ExitPlanMode", map[string]any{"plan": "1. Write out.txt"})
			if res.IsError || !strings.Contains(resultText(res), "approved the plan") {
				t.Fatalf("ExitPlanMode (error %v): %s", res.IsError, resultText(res))
			}
			if len(el.messages) != 1 || !strings.Contains(el.messages[0], "1. Write out.txt") {
				t.Errorf("elicitations: %q", el.messages)
			}
			if res := callTool(t, cs, "Write", write); res.IsError {
				t.Errorf("Write after approval: %s", resultText(res))
			}
			if b, err := os.ReadFile(target); err != nil || string(b) != "hello\n" {
				t.Errorf("out.txt = %q, %v", b, err)
			}
		})
	}
}

func TestPlanMode_rejected_plan_keeps_plan_mode(t *testing.T) {
	t.Parallel()
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			el := &elicitations{answers: map[string]*mcp.ElicitResult{
				"approve this plan": {Action: "accept", Content: map[string]any{"approve": false, "feedback": "smaller steps"}},
			}}
			cs, dir := workflowServerAt(t, version, &mcp.ClientOptions{ElicitationHandler: el.handle})
			callTool(t, cs, "EnterPlanMode", map[string]any{})
			res := callTool(t, cs, "ExitPlanMode", map[string]any{"plan": "do it all"})
			if !res.IsError || !strings.Contains(resultText(res), "The user's feedback: smaller steps") {
				t.Errorf("ExitPlanMode (error %v): %s", res.IsError, resultText(res))
			}
			if res := callTool(t, cs, "Write", map[string]any{"file_path": filepath.Join(dir, "x"), "content": "x"}); !res.IsError {
				t.Errorf("Write after a rejected plan ran: %s", resultText(res))
			}
		})
	}
}

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestAgent_hidden_without_sampling(t *testing.T) {
	t.Parallel()
	cs, _ := workflowServer(t, nil)
	names := listNames(t, cs)
	if slices.Contains(names, "Agent") {
		t.Errorf("Agent listed for a client without sampling: %q", names)
	}
	if !slices.Contains(names, "AskUserQuestion") || !slices.Contains(names, "WebFetch") {
		t.Errorf("tools missing from the list: %q", names)
	}
	res := callTool(t, cs, "Task", map[string]any{"description": "d", "prompt": "p"})
	if !res.IsError || !strings.Contains(resultText(res), "must support MCP sampling") {
		t.Errorf("Task without sampling (error %v): %s", res.IsError, resultText(res))
	}
}

// samplingScript is a client model for sub-agents: it reads a file with
// the server's Read tool, then reports what the tool returned.
type samplingScript struct {
	mu       sync.Mutex
	requests []*mcp.CreateMessageWithToolsParams
	file     string
}

func (s *samplingScript) handle(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req.Params)
	msgs := req.Params.Messages
	last := msgs[len(msgs)-1]
	for _, c := range last.Content {
		if tr, ok := c.(*mcp.ToolResultContent); ok {
			text := ""
			for _, rc := range tr.Content {
				if tc, ok := rc.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "scripted", StopReason: "endTurn",
				Content: []mcp.Content{&mcp.TextContent{Text: "The file says: " + strings.TrimSpace(text)}}}, nil
		}
	}
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "scripted", StopReason: "toolUse",
		Content: []mcp.Content{
			&mcp.TextContent{Text: "Reading it."},
			&mcp.ToolUseContent{ID: "tu1", Name: "Read", Input: map[string]any{"file_path": s.file}},
		}}, nil
}

func TestAgent_through_sampling_with_tools(t *testing.T) {
	t.Parallel()
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			script := &samplingScript{}
			cs, dir := workflowServerAt(t, version, &mcp.ClientOptions{CreateMessageWithToolsHandler: script.handle})
			script.file = filepath.Join(dir, "notes.txt")
			if err := os.WriteFile(script.file, []byte("the answer is 42\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if names := listNames(t, cs); !slices.Contains(names, "Agent") {
				t.Fatalf("Agent not listed for a sampling client: %q", names)
			}
			res := callTool(t, cs, "Agent", map[string]any{"description": "Read notes", "prompt": "What does notes.txt say?", "subagent_type": "Explore"})
			if res.IsError || !strings.Contains(resultText(res), "The file says:") || !strings.Contains(resultText(res), "the answer is 42") {
				t.Fatalf("Agent (error %v): %s", res.IsError, resultText(res))
			}
			if len(script.requests) != 2 {
				t.Fatalf("%d sampling requests, want 2", len(script.requests))
			}
			first := script.requests[0]
			var offered []string
			for _, tool := range first.Tools {
				offered = append(offered, tool.Name)
			}
			if !slices.Contains(offered, "Read") || slices.Contains(offered, "Write") || slices.Contains(offered, "Agent") || slices.Contains(offered, "AskUserQuestion") {
				t.Errorf("an Explore sub-agent was offered %q", offered)
			}
			if !strings.Contains(first.SystemPrompt, "read-only") {
				t.Errorf("system prompt = %q", first.SystemPrompt)
			}
			var out map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &out)
			if out["status"] != "completed" || out["subagent_type"] != "Explore" {
				t.Errorf("structured content = %s", b)
			}
		})
	}
}

func TestWebFetch_prompt_applied_through_sampling(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<h1>Release notes</h1><p>Version 2 adds plugins.</p>")
	}))
	defer page.Close()
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			var asked []string
			var mu sync.Mutex
			handler := func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
				mu.Lock()
				defer mu.Unlock()
				for _, c := range req.Params.Messages[0].Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						asked = append(asked, tc.Text)
					}
				}
				return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "scripted",
					Content: []mcp.Content{&mcp.TextContent{Text: "Version 2 adds plugins."}}}, nil
			}
			cs, _ := serverWith(t, version, builtin.Options{WebAllowPrivate: true}, &mcp.ClientOptions{CreateMessageWithToolsHandler: handler})
			res := callTool(t, cs, "WebFetch", map[string]any{"url": page.URL, "prompt": "What is new?"})
			if res.IsError || resultText(res) != "Version 2 adds plugins." {
				t.Errorf("WebFetch (error %v): %s", res.IsError, resultText(res))
			}
			if len(asked) != 1 || !strings.Contains(asked[0], "# Release notes") || !strings.HasSuffix(asked[0], "What is new?") {
				t.Errorf("the model was asked %q", asked)
			}
		})
	}
}

func TestRoundTrip_unknown_request_state(t *testing.T) {
	t.Parallel()
	cs, _ := workflowServer(t, nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "EnterPlanMode", Arguments: map[string]any{}, RequestState: "forged"})
	if err == nil || !strings.Contains(err.Error(), "requestState is unknown or expired") {
		t.Errorf("err = %v", err)
	}
}

package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

type spyInput struct {
	Size int `json:"size,omitempty"`
	// Echo puts the text in the output object too, making it as large.
	Echo bool `json:"echo,omitempty"`
}

// testTools are tools with behaviour the built-ins do not give on demand:
// a result of any size, and a call that reports progress and then waits
// to be cancelled.
func testTools(cancelled chan<- struct{}) []*tools.Tool {
	big := tools.New(tools.Tool{
		Name:               "Big",
		MaxResultSizeChars: 1000,
		ReadOnly:           true,
		ConcurrencySafe:    true,
	}, tools.Handler[spyInput]{
		Call: func(_ context.Context, in *spyInput, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			var b strings.Builder
			for i := 0; b.Len() < in.Size; i++ {
				b.WriteString(strings.Repeat("y", 99) + "\n")
			}
			out := map[string]any{"size": in.Size}
			if in.Echo {
				out["text"] = b.String()[:in.Size]
			}
			return &tools.Result{Text: b.String()[:in.Size], Output: out}, nil
		},
	})
	slow := tools.New(tools.Tool{
		Name:    "Slow",
		Aliases: []string{"Sluggish"},
	}, tools.Handler[spyInput]{
		Call: func(ctx context.Context, _ *spyInput, _ *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
			for i := 1; i <= 3; i++ {
				progress(tools.ProgressUpdate{Progress: float64(i), Total: 10, Message: "step"})
			}
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		},
	})
	return []*tools.Tool{big, slow}
}

// connect starts a server over in-memory transports and returns a client
// session, closed at the end of the test.
func connect(t *testing.T, ts []*tools.Tool, opts *mcp.ClientOptions) (*Server, *mcp.ClientSession) {
	t.Helper()
	return connectWith(t, false, ts, opts)
}

// connectWith is connect with the server's StructuredOutput set as given.
func connectWith(t *testing.T, structured bool, ts []*tools.Tool, opts *mcp.ClientOptions) (*Server, *mcp.ClientSession) {
	t.Helper()
	pool, err := orchestrator.AssemblePool(append(builtin.Tools(builtin.Options{}), ts...), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Name: "agent-mcp", Version: "test",
		Pipeline:         &orchestrator.Pipeline{Pool: pool},
		Session:          tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()},
		StructuredOutput: structured,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, connectClient(t, srv, opts)
}

func connectClient(t *testing.T, srv *Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestOverBudgetResultIsPersistedAndReadableAsResource(t *testing.T) {
	t.Parallel()
	srv, cs := connect(t, testTools(nil), nil)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Big", Arguments: map[string]any{"size": 5000}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("result = %+v", res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.HasPrefix(text, "<persisted-output>\nOutput too large (4.9KB). Full output saved to: ") {
		t.Errorf("preview = %q", text)
	}
	link, ok := res.Content[1].(*mcp.ResourceLink)
	if !ok || !strings.HasPrefix(link.URI, orchestrator.ResultURIPrefix) || link.Size == nil || *link.Size != 5000 {
		t.Fatalf("second block = %#v", res.Content[1])
	}
	if res.StructuredContent != nil {
		t.Errorf("structuredContent = %v, want none by default", res.StructuredContent)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	if err != nil {
		t.Fatal(err)
	}
	if got := read.Contents[0].Text; len(got) != 5000 || !strings.HasPrefix(got, "yyyy") {
		t.Errorf("resource holds %d chars", len(got))
	}

	// Another session cannot read this session's results.
	other := connectClient(t, srv, nil)
	if _, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI}); err == nil {
		t.Error("another session read this session's persisted result")
	}
}

func TestProgressAndCancellation(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{}, 1)
	var mu sync.Mutex
	var progress []float64
	gotThree := make(chan struct{})
	_, cs := connect(t, testTools(cancelled), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, req.Params.Progress)
			if len(progress) == 3 {
				close(gotThree)
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	params := &mcp.CallToolParams{Name: "Sluggish", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, params)
		errc <- err
	}()
	select {
	case <-gotThree:
	case <-testbin.WaitDone(t):
		t.Fatal("no progress notifications arrived")
	}
	cancel()
	select {
	case <-cancelled:
	case <-testbin.WaitDone(t):
		t.Fatal("the tool's context was not cancelled by the client's cancellation")
	}
	if err := <-errc; err == nil {
		t.Error("cancelled call returned no error to the client")
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Errorf("progress did not increase: %v", progress)
		}
	}
}

func TestToolsListAnnotationsAndErrors(t *testing.T) {
	t.Parallel()
	_, cs := connect(t, nil, nil)
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	read := byName["Read"]
	if read == nil || !read.Annotations.ReadOnlyHint || *read.Annotations.DestructiveHint || *read.Annotations.OpenWorldHint {
		t.Fatalf("Read annotations = %+v", read)
	}
	schema, _ := json.Marshal(read.InputSchema)
	if !strings.Contains(string(schema), `"additionalProperties":false`) || !strings.Contains(string(schema), `"required":["file_path"]`) {
		t.Errorf("Read schema = %s", schema)
	}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "NoSuchTool"}); err == nil || !strings.Contains(err.Error(), "NoSuchTool") {
		t.Errorf("unknown tool: err = %v, want a JSON-RPC error naming it", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"path": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(msg, `missing required parameter "file_path"`) || !strings.Contains(msg, `unknown parameter "path"`) {
		t.Errorf("invalid call: %v %q", res.IsError, msg)
	}
}

func TestConcurrentCallsOfOneSessionFollowTheGate(t *testing.T) {
	t.Parallel()
	running := make(chan string, 10)
	release := make(chan struct{})
	mk := func(name string, safe bool) *tools.Tool {
		return tools.New(tools.Tool{
			Name: name,
		}, tools.Handler[spyInput]{
			ConcurrencySafe: func(*spyInput) bool { return safe },
			ReadOnly:        func(*spyInput) bool { return safe },
			Call: func(ctx context.Context, _ *spyInput, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
				running <- name
				select {
				case <-release:
				case <-ctx.Done():
				}
				return &tools.Result{Text: name}, nil
			},
		})
	}
	_, cs := connect(t, []*tools.Tool{mk("SafeA", true), mk("SafeB", true), mk("Exclusive", false)}, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	callAsync := func(name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); err != nil {
				t.Error(err)
			}
		}()
	}
	callAsync("SafeA")
	callAsync("SafeB")
	// Both safe calls run at once: neither returns until release.
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case n := <-running:
			got[n] = true
		case <-testbin.WaitDone(t):
			t.Fatalf("safe calls did not overlap; running: %v", got)
		}
	}
	callAsync("Exclusive")
	// The exclusive call must not start while the safe ones hold the gate.
	select {
	case n := <-running:
		t.Fatalf("%s started beside running safe calls", n)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case n := <-running:
		if n != "Exclusive" {
			t.Fatalf("unexpected %s", n)
		}
	case <-testbin.WaitDone(t):
		t.Fatal("the exclusive call never ran")
	}
	wg.Wait()
}

// TestPromptsOfferedOnlyWhenDeclared: a server without prompts declares
// no prompts capability and answers prompts/list and prompts/get as
// methods it does not offer (-32601); once a prompt is added, the
// capability is declared and the methods served.
func TestPromptsOfferedOnlyWhenDeclared(t *testing.T) {
	t.Parallel()
	srv, cs := connect(t, nil, nil)
	if caps := cs.InitializeResult().Capabilities; caps.Prompts != nil {
		t.Errorf("the prompts capability is declared: %+v", caps.Prompts)
	}
	ctx := context.Background()
	_, err := cs.ListPrompts(ctx, nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("prompts/list without prompts: %v, want Method not found", err)
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "any"})
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("prompts/get without prompts: %v, want Method not found", err)
	}

	srv.MCP().AddPrompt(&mcp.Prompt{Name: "hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	cs = connectClient(t, srv, nil)
	if cs.InitializeResult().Capabilities.Prompts == nil {
		t.Error("a server with a prompt does not declare the capability")
	}
	if res, err := cs.ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 1 {
		t.Errorf("prompts/list with a prompt: %v, %v", res, err)
	}
	if res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello"}); err != nil || len(res.Messages) != 1 {
		t.Errorf("prompts/get with a prompt: %v, %v", res, err)
	}
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/providers"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/orchestrator/upstream"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/shell"
)

func TestMain(m *testing.M) {
	testmodel.RunUpstreamIfAsked()
	os.Exit(m.Run())
}

var formats = []string{"anthropic", "openai"}

// harness is an agent talking to a scripted model server.
type harness struct {
	srv   *testmodel.Server
	agent *Agent
	pipe  *orchestrator.Pipeline
	log   *eventLog
}

type options struct {
	builtins      []*tools.Tool
	mcp           *upstream.Manager
	permit        orchestrator.Permitter
	asker         tools.Asker
	maxTurns      int
	contextWindow int
}

func newHarness(t *testing.T, format string, o options, replies ...testmodel.Reply) *harness {
	t.Helper()
	srv := testmodel.NewServer(t, replies...)
	base := srv.URL
	if format == "openai" {
		base += "/v1"
	}
	model, err := providers.New(providers.Options{
		Model: format + "/test-model", BaseURL: base, MaxRetries: 0,
		Getenv: func(k string) string {
			return map[string]string{"ANTHROPIC_API_KEY": "test-key", "OPENAI_API_KEY": "test-key"}[k]
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var mcpTools []*tools.Tool
	if o.mcp != nil {
		mcpTools = o.mcp.Tools()
	}
	pool, err := orchestrator.AssemblePool(o.builtins, mcpTools, nil)
	if err != nil {
		t.Fatal(err)
	}
	pipe := &orchestrator.Pipeline{Pool: pool, Permit: o.permit}
	sess := tooltest.NewSession(t, tools.SessionOptions{})
	log := &eventLog{}
	cfg := Options{
		Model: model, Pipeline: pipe, System: "You are a test.",
		UseContext: tools.UseContext{Session: sess, Asker: o.asker},
		MaxTurns:   o.maxTurns, ContextWindow: o.contextWindow, MaxTokens: 1000,
		Events: Events{
			ToolStart: func(c orchestrator.Call) { log.add("start " + c.ID) },
			ToolEnd:   func(out orchestrator.Outcome) { log.add("end " + out.Call.ID) },
		},
	}
	if o.mcp != nil {
		cfg.Refresh = func() *orchestrator.Pool {
			if !o.mcp.Changed() {
				return nil
			}
			p, err := orchestrator.AssemblePool(o.builtins, o.mcp.Tools(), nil)
			if err != nil {
				t.Errorf("rebuilding the pool: %v", err)
				return nil
			}
			return p
		}
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{srv: srv, agent: a, pipe: pipe, log: log}
}

type eventLog struct {
	mu  sync.Mutex
	evs []string
}

func (l *eventLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, s)
}

func (l *eventLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

func (l *eventLog) index(s string) int { return slices.Index(l.list(), s) }

// messagesOf returns the conversation a request carried, in a neutral
// shape: for each message its role and, per block, a short description.
func messagesOf(t *testing.T, r testmodel.Request) []string {
	t.Helper()
	var out []string
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		role := mm["role"].(string)
		if role == "system" {
			continue
		}
		switch c := mm["content"].(type) {
		case string:
			out = append(out, role+": "+c)
		case []any:
			for _, b := range c {
				bb := b.(map[string]any)
				switch bb["type"] {
				case "text":
					out = append(out, role+": "+bb["text"].(string))
				case "tool_use":
					in, _ := json.Marshal(bb["input"])
					out = append(out, fmt.Sprintf("%s: call %s %s %s", role, bb["id"], bb["name"], in))
				case "tool_result":
					out = append(out, fmt.Sprintf("%s: result %s error=%v %s", role, bb["tool_use_id"], bb["is_error"] == true, resultText(bb["content"])))
				case "image_url":
					out = append(out, role+": image")
				}
			}
		case nil:
		}
		if calls, ok := mm["tool_calls"].([]any); ok {
			for _, c := range calls {
				cc := c.(map[string]any)
				fn := cc["function"].(map[string]any)
				out = append(out, fmt.Sprintf("%s: call %s %s %s", role, cc["id"], fn["name"], fn["arguments"]))
			}
		}
		if role == "tool" {
			out[len(out)-1] = fmt.Sprintf("user: result %s error=%v %s", mm["tool_call_id"], strings.HasPrefix(fmt.Sprint(mm["content"]), "Error: "),
				strings.TrimPrefix(fmt.Sprint(mm["content"]), "Error: "))
		}
	}
	return out
}

func resultText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			if bb, ok := b.(map[string]any); ok && bb["type"] == "text" {
				parts = append(parts, bb["text"].(string))
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got: %q\nwant: %q", what, got, want)
	}
}

// Test tools.

type textIn struct {
	Text string `json:"text"`
}

func echoTool() *tools.Tool {
	return tools.New(tools.Tool{
		Name: "Echo", Description: "Echo text.",
		ReadOnly:        true,
		ConcurrencySafe: true,
	}, tools.Handler[textIn]{
		Call: func(_ context.Context, in *textIn, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			return &tools.Result{Text: "echo: " + in.Text}, nil
		},
	})
}

// gate is a set of named events a test can wait for.
type gate struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func newGate() *gate { return &gate{ch: map[string]chan struct{}{}} }

func (g *gate) get(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.ch[name]
	if !ok {
		c = make(chan struct{})
		g.ch[name] = c
	}
	return c
}

func (g *gate) open(name string) {
	c := g.get(name)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

func (g *gate) wait(ctx context.Context, name string) error {
	select {
	case <-g.get(name):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %q: %w", name, ctx.Err())
	}
}

// probeTool is concurrency-safe: it opens "started <text>" and then waits
// for "release <text>" (or its context) before answering.
func probeTool(g *gate) *tools.Tool {
	return tools.New(tools.Tool{
		Name: "Probe", Description: "Probe.",
		ReadOnly:        true,
		ConcurrencySafe: true,
	}, tools.Handler[textIn]{
		Call: func(ctx context.Context, in *textIn, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			g.open("started " + in.Text)
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := g.wait(wctx, "release "+in.Text); err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("probe %s stopped: %w", in.Text, context.Cause(ctx))
				}
				return nil, err
			}
			return &tools.Result{Text: "probe " + in.Text}, nil
		},
	})
}

// serialTool is not concurrency-safe; it records its input.
func serialTool(g *gate) *tools.Tool {
	return tools.New(tools.Tool{
		Name: "Serial", Description: "Serial.",
	}, tools.Handler[textIn]{
		Call: func(_ context.Context, in *textIn, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			g.open("started " + in.Text)
			return &tools.Result{Text: "serial " + in.Text}, nil
		},
	})
}

func call(id, name, input string) testmodel.ToolCall {
	return testmodel.ToolCall{ID: id, Name: name, Input: input}
}

func TestRun(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Run("text_only", func(t *testing.T) { testTextOnly(t, format) })
			t.Run("one_tool_call", func(t *testing.T) { testOneToolCall(t, format) })
			t.Run("parallel_and_serial_calls", func(t *testing.T) { testParallelAndSerial(t, format) })
			t.Run("failure_aborts_siblings", func(t *testing.T) { testAbortSiblings(t, format) })
			t.Run("denied_call", func(t *testing.T) { testDenied(t, format) })
			t.Run("ask_answered", func(t *testing.T) { testAsk(t, format) })
			t.Run("max_turns", func(t *testing.T) { testMaxTurns(t, format) })
			t.Run("unknown_tool", func(t *testing.T) { testUnknownTool(t, format) })
			t.Run("context_clearing_and_summary", func(t *testing.T) { testContext(t, format) })
		})
	}
}

func testTextOnly(t *testing.T, format string) {
	h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}}, testmodel.Say("Hello there."))
	res, err := h.agent.Run(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Hello there." || res.Turns != 1 || res.Stop != llm.StopEndTurn {
		t.Errorf("result = %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	// The exact request.
	var want string
	if format == "anthropic" {
		want = `{"max_tokens":1000,"messages":[{"content":[{"cache_control":{"type":"ephemeral"},"text":"hi","type":"text"}],"role":"user"}],` +
			`"model":"test-model","stream":true,"system":[{"text":"You are a test.","type":"text"}],` +
			`"tools":[{"cache_control":{"type":"ephemeral"},"description":"Echo text.","input_schema":{"additionalProperties":false,"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"},"name":"Echo"}]}`
	} else {
		want = `{"max_tokens":1000,"messages":[{"content":"You are a test.","role":"system"},{"content":"hi","role":"user"}],"model":"test-model",` +
			`"stream":true,"stream_options":{"include_usage":true},` +
			`"tools":[{"function":{"description":"Echo text.","name":"Echo","parameters":{"additionalProperties":false,"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}},"type":"function"}]}`
	}
	got, _ := json.Marshal(reqs[0].Body)
	if string(got) != want {
		t.Errorf("request body:\n got: %s\nwant: %s", got, want)
	}
	if reqs[0].Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("authorization = %q", reqs[0].Header.Get("Authorization"))
	}
}

func testOneToolCall(t *testing.T, format string) {
	h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}},
		testmodel.Reply{Parts: []testmodel.Part{{Text: "Let me echo."}, {Tool: &testmodel.ToolCall{ID: "t1", Name: "Echo", Input: `{"text":"x"}`}}}},
		testmodel.Say("Done."))
	res, err := h.agent.Run(context.Background(), "echo x")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Done." || res.Turns != 2 {
		t.Errorf("result = %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	equalLines(t, "second request", messagesOf(t, reqs[1]), []string{
		"user: echo x",
		"assistant: Let me echo.",
		`assistant: call t1 Echo {"text":"x"}`,
		"user: result t1 error=false echo: x",
	})
}

func testParallelAndSerial(t *testing.T, format string) {
	g := newGate()
	// Calls: A and B (safe, one batch), C (serial), D (safe). The stream
	// waits until A has started before it sends B, so A provably starts
	// while the model is still streaming; A and B are released only once
	// both started, so they provably overlap.
	reply := testmodel.Reply{Parts: []testmodel.Part{
		{Tool: &testmodel.ToolCall{ID: "a", Name: "Probe", Input: `{"text":"a"}`}, Wait: func(ctx context.Context) error {
			return g.wait(ctx, "started a")
		}},
		{Tool: &testmodel.ToolCall{ID: "b", Name: "Probe", Input: `{"text":"b"}`}},
		{Tool: &testmodel.ToolCall{ID: "c", Name: "Serial", Input: `{"text":"c"}`}},
		{Tool: &testmodel.ToolCall{ID: "d", Name: "Probe", Input: `{"text":"d"}`}},
	}}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if g.wait(ctx, "started a") == nil && g.wait(ctx, "started b") == nil {
			g.open("release a")
			g.open("release b")
		}
		g.open("release d")
	}()
	h := newHarness(t, format, options{builtins: []*tools.Tool{probeTool(g), serialTool(g)}}, reply, testmodel.Say("ok"))
	if _, err := h.agent.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	got := messagesOf(t, reqs[1])
	equalLines(t, "results in call order", got[len(got)-4:], []string{
		"user: result a error=false probe a",
		"user: result b error=false probe b",
		"user: result c error=false serial c",
		"user: result d error=false probe d",
	})
	l := h.log
	if !(l.index("start b") < l.index("end a") && l.index("start a") < l.index("end b")) {
		t.Errorf("a and b did not overlap: %v", l.list())
	}
	if !(l.index("end a") < l.index("start c") && l.index("end b") < l.index("start c") && l.index("end c") < l.index("start d")) {
		t.Errorf("serial call c did not run alone between the batches: %v", l.list())
	}
}

func testAbortSiblings(t *testing.T, format string) {
	g := newGate()
	// The real Bash: a read-only command is concurrency-safe, and its
	// failure cancels the call running beside it.
	reply := testmodel.Call(call("p", "Probe", `{"text":"p"}`), call("f", "Bash", `{"command":"ls /nonexistent-agent-mcp-test-dir"}`))
	h := newHarness(t, format, options{builtins: []*tools.Tool{probeTool(g), shell.Bash(shell.Options{})}}, reply, testmodel.Say("ok"))
	if _, err := h.agent.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	got := messagesOf(t, h.srv.Requests()[1])
	last := got[len(got)-2:]
	if !strings.Contains(last[0], "result p error=true") || !strings.Contains(last[0], "failed") || !strings.Contains(last[0], "Bash") {
		t.Errorf("probe result = %q, want it cancelled because Bash failed", last[0])
	}
	if !strings.HasPrefix(last[1], "user: result f error=true") || !strings.Contains(last[1], "nonexistent-agent-mcp-test-dir") {
		t.Errorf("bash result = %q", last[1])
	}
}

func testDenied(t *testing.T, format string) {
	deny := orchestrator.PermitterFunc(func(_ context.Context, req orchestrator.PermissionRequest) permissions.Decision {
		return permissions.Decision{Behavior: permissions.Deny, Reason: "Echo is not allowed here.", Rule: "Echo"}
	})
	h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}, permit: deny},
		testmodel.Call(call("t1", "Echo", `{"text":"x"}`)), testmodel.Say("ok"))
	if _, err := h.agent.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	got := messagesOf(t, h.srv.Requests()[1])
	want := "user: result t1 error=true Permission to use Echo was denied. Echo is not allowed here. (rule: Echo)"
	if got[len(got)-1] != want {
		t.Errorf("result = %q, want %q", got[len(got)-1], want)
	}
	if h.log.index("start t1") >= 0 && h.log.index("end t1") < 0 {
		t.Errorf("events = %v", h.log.list())
	}
}

// scriptedAsker answers every question with the next answer.
type scriptedAsker struct {
	mu       sync.Mutex
	answers  []tools.Answer
	messages []string
}

func (a *scriptedAsker) Ask(_ context.Context, msg string, _ map[string]any) (tools.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.messages = append(a.messages, msg)
	if len(a.answers) == 0 {
		return tools.Answer{Action: "decline"}, nil
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans, nil
}

// askPermit asks through the call's Asker, as the settings permitter does.
var askPermit = orchestrator.PermitterFunc(func(ctx context.Context, req orchestrator.PermissionRequest) permissions.Decision {
	ans, err := req.UC.Asker.Ask(ctx, "Allow "+req.Tool.Name+"?", map[string]any{"type": "object"})
	if err != nil || ans.Action != "accept" || ans.Content["decision"] != "allow_once" {
		return permissions.Decision{Behavior: permissions.Deny, Reason: "The user said no."}
	}
	return permissions.Decision{Behavior: permissions.Allow}
})

func testAsk(t *testing.T, format string) {
	asker := &scriptedAsker{answers: []tools.Answer{
		{Action: "accept", Content: map[string]any{"decision": "allow_once"}},
		{Action: "accept", Content: map[string]any{"decision": "deny"}},
	}}
	h := newHarness(t, format, options{builtins: []*tools.Tool{serialTool(newGate())}, permit: askPermit, asker: asker},
		testmodel.Call(call("t1", "Serial", `{"text":"one"}`), call("t2", "Serial", `{"text":"two"}`)), testmodel.Say("ok"))
	if _, err := h.agent.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	got := messagesOf(t, h.srv.Requests()[1])
	equalLines(t, "results", got[len(got)-2:], []string{
		"user: result t1 error=false serial one",
		"user: result t2 error=true Permission to use Serial was denied. The user said no.",
	})
	if len(asker.messages) != 2 {
		t.Errorf("asked %d times, want 2", len(asker.messages))
	}
}

func testMaxTurns(t *testing.T, format string) {
	h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}, maxTurns: 1},
		testmodel.Call(call("t1", "Echo", `{"text":"x"}`)))
	res, err := h.agent.Run(context.Background(), "go")
	if !errors.Is(err, ErrMaxTurns) {
		t.Fatalf("err = %v, want ErrMaxTurns", err)
	}
	if res.Turns != 1 || len(h.srv.Requests()) != 1 {
		t.Errorf("turns = %d, requests = %d; want 1 and 1", res.Turns, len(h.srv.Requests()))
	}
	// The conversation stays consistent: the call has its result.
	msgs := h.agent.Messages()
	if last := msgs[len(msgs)-1]; last.Role != llm.User || last.Content[0].Type != llm.ToolResultBlock {
		t.Errorf("last message = %+v", last)
	}
}

func testUnknownTool(t *testing.T, format string) {
	h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}},
		testmodel.Call(call("t1", "Nope", `{}`)), testmodel.Say("ok"))
	if _, err := h.agent.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	got := messagesOf(t, h.srv.Requests()[1])
	want := "user: result t1 error=true No tool named Nope is available. Use one of the tools you were given."
	if got[len(got)-1] != want {
		t.Errorf("result = %q, want %q", got[len(got)-1], want)
	}
}

func testContext(t *testing.T, format string) {
	big := strings.Repeat("z", 3000)
	// Each tool result is ~3000 characters (~750 tokens); the window is
	// 4000 tokens, so the threshold (3200) is passed after four results.
	replies := []testmodel.Reply{}
	for i := 1; i <= 5; i++ {
		replies = append(replies, testmodel.Call(call(fmt.Sprintf("t%d", i), "Echo", fmt.Sprintf(`{"text":"%d%s"}`, i, big))))
	}
	replies = append(replies, testmodel.Say("all done"))
	h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}, contextWindow: 4000}, replies...)
	if _, err := h.agent.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	last := messagesOf(t, reqs[5])
	cleared := 0
	for _, l := range last {
		if strings.Contains(l, clearedToolResult) {
			cleared++
		}
	}
	if cleared == 0 {
		t.Errorf("no tool result was cleared in the last request: %q", last)
	}
	// The latest three results are intact.
	if !strings.HasSuffix(last[len(last)-1], "echo: 5"+big) {
		t.Errorf("latest result was changed: %.80q", last[len(last)-1])
	}

	// Summarising: a second prompt on the same agent, with a summary reply
	// scripted for the summarisation call.
	h.srv.Push(testmodel.Say("SUMMARY: echoed five times"), testmodel.Say("fine"))
	h.agent.cfg.ContextWindow = 1000
	if _, err := h.agent.Run(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	reqs = h.srv.Requests()
	sum := messagesOf(t, reqs[6])
	if len(sum) != 1 || !strings.Contains(sum[0], "Summarise this conversation") || !strings.Contains(sum[0], "user: go") {
		t.Errorf("summary request = %.200q", sum)
	}
	final := messagesOf(t, reqs[7])
	if len(final) < 1 || final[0] != "user: "+summaryPrefix+"SUMMARY: echoed five times" || final[len(final)-1] != "user: again" {
		t.Errorf("request after summary = %.300q", final)
	}
}

// Events.Usage gets the run's tokens as the provider reports them: the
// finished calls' totals plus the current call's report, and a new run
// starts from zero.
func TestRun_usage_events_sum_the_run(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			call := testmodel.Call(testmodel.ToolCall{ID: "c1", Name: "Echo", Input: `{"text":"x"}`})
			call.InputTokens, call.OutputTokens = 100, 10
			h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}}, call,
				testmodel.Reply{Parts: []testmodel.Part{{Text: "done"}}, InputTokens: 150, OutputTokens: 5},
				testmodel.Reply{Parts: []testmodel.Part{{Text: "again"}}, InputTokens: 7, OutputTokens: 3})
			var mu sync.Mutex
			var got []llm.Usage
			h.agent.cfg.Events.Usage = func(u llm.Usage) { mu.Lock(); got = append(got, u); mu.Unlock() }
			if _, err := h.agent.Run(context.Background(), "hi"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			last := got[len(got)-1]
			mu.Unlock()
			if last.InputTokens != 250 || last.OutputTokens != 15 {
				t.Errorf("the run's last usage event %+v, want 250 in, 15 out", last)
			}
			if _, err := h.agent.Run(context.Background(), "more"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if last := got[len(got)-1]; last.InputTokens != 7 || last.OutputTokens != 3 {
				t.Errorf("the next run's last usage event %+v, want 7 in, 3 out", last)
			}
		})
	}
}

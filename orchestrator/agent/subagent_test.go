package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/workflow"
)

type probeInput struct {
	Q string `json:"q"`
}

// probe is concurrency-safe and read-only unless asked to "write" (which it
// records as a poke); poke writes and runs alone.
func testTools(pokes *[]string, mu *sync.Mutex) []*tools.Tool {
	probe := tools.New(tools.Tool{
		Name: "Probe", Description: "reads",
		ConcurrencySafe: true,
	}, tools.Handler[probeInput]{
		ReadOnly: func(in *probeInput) bool { return in.Q != "write" },
		Call: func(_ context.Context, in *probeInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			if in.Q == "write" {
				mu.Lock()
				*pokes = append(*pokes, "probe")
				mu.Unlock()
			}
			return &tools.Result{Text: fmt.Sprintf("probed %s in %s mode", in.Q, uc.Session.Mode())}, nil
		},
	})
	poke := tools.New(tools.Tool{
		Name: "Poke", Description: "writes",
	}, tools.Handler[probeInput]{
		Call: func(_ context.Context, in *probeInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			mu.Lock()
			*pokes = append(*pokes, in.Q)
			mu.Unlock()
			return &tools.Result{Text: "poked " + in.Q}, nil
		},
	})
	return []*tools.Tool{probe, poke, workflow.Agent(workflow.AgentOptions{}), workflow.AskUserQuestion()}
}

// script is a Model that plays a list of answers and records each request.
type script struct {
	mu       sync.Mutex
	answers  []llm.Message
	requests []llm.Request
	loop     *llm.Message // answered forever once answers run out
}

func (s *script) Stream(_ context.Context, req llm.Request, _ llm.Handler) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Messages = append([]llm.Message(nil), req.Messages...)
	s.requests = append(s.requests, req)
	if len(s.answers) == 0 {
		if s.loop != nil {
			return &llm.Response{Message: *s.loop}, nil
		}
		return nil, fmt.Errorf("script exhausted")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return &llm.Response{Message: a}, nil
}

// answer is an assistant message of blocks.
func answer(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.Assistant, Content: blocks}
}

func use(id, name, q string) llm.Block {
	return llm.Block{Type: llm.ToolUseBlock, ID: id, Name: name, Input: json.RawMessage(fmt.Sprintf(`{"q":%q}`, q))}
}

func text(s string) llm.Block { return llm.Text(s) }

// resultTexts are the texts of the tool results in m, with their ids and
// error flags.
func resultTexts(m llm.Message) []string {
	var out []string
	for _, b := range m.Content {
		if b.Type != llm.ToolResultBlock {
			continue
		}
		var parts []string
		for _, c := range b.Content {
			parts = append(parts, c.Text)
		}
		out = append(out, fmt.Sprintf("%s error=%v %s", b.ToolUseID, b.IsError, strings.Join(parts, "\n")))
	}
	return out
}

func setup(t *testing.T, mode permissions.Mode, model llm.Model) (*orchestrator.Pipeline, *tools.UseContext, *[]string) {
	t.Helper()
	var pokes []string
	var mu sync.Mutex
	pool, err := orchestrator.AssemblePool(testTools(&pokes, &mu), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &orchestrator.Pipeline{Pool: pool, MaxParallel: 2}
	sess := tooltest.NewSession(t, tools.SessionOptions{Mode: mode})
	uc := &tools.UseContext{Session: sess, SubAgents: &agent.SubAgents{Pipeline: p, Model: model, MaxTurns: 5}}
	return p, uc, &pokes
}

func offered(defs []llm.Tool) string {
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	return strings.Join(names, ",")
}

// runAgent calls the Agent tool through the parent pipeline, as a model would.
func runAgent(p *orchestrator.Pipeline, uc *tools.UseContext, args string) orchestrator.Outcome {
	return p.Run(context.Background(), uc, orchestrator.Call{ID: "call-1", Name: "Agent", Input: json.RawMessage(args)}, nil)
}

func TestSubAgents_tool_calls_then_final_answer(t *testing.T) {
	t.Parallel()
	model := &script{answers: []llm.Message{
		answer(text("Looking."), use("u1", "Probe", "a"), use("u2", "Probe", "b")),
		// An exclusive call while the parent's Agent call holds a place in
		// the parent session's gate: it must not wait on it.
		answer(use("u3", "Poke", "c")),
		answer(text("Done: probed a and b, poked c.")),
	}}
	p, uc, pokes := setup(t, permissions.ModeDefault, model)
	out := runAgent(p, uc, `{"description":"Try it","prompt":"Probe a and b, poke c"}`)
	if out.Err != nil || out.Result.IsError {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
	if out.Result.Text != "Done: probed a and b, poked c." {
		t.Errorf("answer = %q", out.Result.Text)
	}
	if len(*pokes) != 1 || (*pokes)[0] != "c" {
		t.Errorf("pokes = %q", *pokes)
	}
	if len(model.requests) != 3 {
		t.Fatalf("%d model calls, want 3", len(model.requests))
	}
	first := model.requests[0]
	if got := offered(first.Tools); got != "Poke,Probe" {
		t.Errorf("offered tools = %s, want Poke,Probe (no Agent, no AskUserQuestion)", got)
	}
	if !strings.Contains(first.System, "sub-agent") || first.Messages[0].TextOf() != "Probe a and b, poke c" {
		t.Errorf("first request = %+v", first)
	}
	second := model.requests[1]
	results := resultTexts(second.Messages[2])
	want := []string{"u1 error=false probed a in default mode", "u2 error=false probed b in default mode"}
	if second.Messages[2].Role != llm.User || !slices.Equal(results, want) {
		t.Errorf("tool results = %q, want %q", results, want)
	}
}

func TestSubAgents_read_only_sub_agent(t *testing.T) {
	t.Parallel()
	model := &script{answers: []llm.Message{
		answer(use("u1", "Poke", "x"), use("u2", "Agent", "y"), use("u3", "Nope", "z"), use("u4", "Probe", "w")),
		answer(text("could not poke")),
	}}
	p, uc, pokes := setup(t, permissions.ModeDefault, model)
	out := runAgent(p, uc, `{"description":"Look","prompt":"p","subagent_type":"Explore"}`)
	if out.Err != nil || out.Result.Text != "could not poke" {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
	if len(*pokes) != 0 {
		t.Errorf("a read-only sub-agent poked: %q", *pokes)
	}
	if got := offered(model.requests[0].Tools); got != "Probe" {
		t.Errorf("offered tools = %s, want Probe", got)
	}
	// Tools it was not given, the parent's or not, do not exist for it.
	results := resultTexts(model.requests[1].Messages[2])
	want := []string{
		"u1 error=true No tool named Poke is available. Use one of the tools you were given.",
		"u2 error=true No tool named Agent is available. Use one of the tools you were given.",
		"u3 error=true No tool named Nope is available. Use one of the tools you were given.",
		"u4 error=false probed w in default mode",
	}
	if !slices.Equal(results, want) {
		t.Errorf("results = %q, want %q", results, want)
	}
}

func TestSubAgents_read_only_refuses_writing_calls(t *testing.T) {
	t.Parallel()
	// A read-only sub-agent is offered Probe (read-only in general), but a
	// call of it that would write is refused.
	model := &script{answers: []llm.Message{answer(use("u1", "Probe", "write")), answer(text("refused"))}}
	p, uc, pokes := setup(t, permissions.ModeDefault, model)
	out := runAgent(p, uc, `{"description":"Look","prompt":"p","subagent_type":"Explore"}`)
	if out.Err != nil || out.Result.Text != "refused" || len(*pokes) != 0 {
		t.Fatalf("outcome: %v %+v, pokes %q", out.Err, out.Result, *pokes)
	}
	got := resultTexts(model.requests[1].Messages[2])
	if len(got) != 1 || !strings.Contains(got[0], "u1 error=true") || !strings.Contains(got[0], "This sub-agent may only make read-only calls.") {
		t.Errorf("result = %q", got)
	}
}

func TestSubAgents_sub_agent_inherits_plan_mode(t *testing.T) {
	t.Parallel()
	model := &script{answers: []llm.Message{answer(use("u1", "Probe", "q")), answer(text("ok"))}}
	p, uc, _ := setup(t, permissions.ModePlan, model)
	out := runAgent(p, uc, `{"description":"Look","prompt":"p","subagent_type":"Plan"}`)
	if out.Err != nil || out.Result.Text != "ok" {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
	if got := resultTexts(model.requests[1].Messages[2]); len(got) != 1 || got[0] != "u1 error=false probed q in plan mode" {
		t.Errorf("result = %q", got)
	}
}

func TestSubAgents_turn_limit(t *testing.T) {
	t.Parallel()
	loop := answer(text("still going"), use("u", "Probe", "again"))
	model := &script{loop: &loop}
	p, uc, _ := setup(t, permissions.ModeDefault, model)
	out := runAgent(p, uc, `{"description":"Forever","prompt":"p"}`)
	if out.Err != nil || !out.Result.IsError || !strings.Contains(out.Result.Text, "stopped after 5 turns without finishing; its last message was:\nstill going") {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
	if len(model.requests) != 5 {
		t.Errorf("%d model calls, want 5", len(model.requests))
	}
}

func TestSubAgents_model_error(t *testing.T) {
	t.Parallel()
	p, uc, _ := setup(t, permissions.ModeDefault, &script{})
	out := runAgent(p, uc, `{"description":"Fail","prompt":"p"}`)
	if out.Err != nil || !out.Result.IsError || !strings.Contains(out.Result.Text, "the sub-agent (Fail) failed: turn 1: script exhausted") {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
}

func TestSubAgents_no_tools(t *testing.T) {
	t.Parallel()
	model := &script{answers: []llm.Message{answer(text("from memory"))}}
	p, uc, _ := setup(t, permissions.ModeDefault, model)
	uc.SubAgents.(*agent.SubAgents).NoTools = true
	out := runAgent(p, uc, `{"description":"Recall","prompt":"p"}`)
	if out.Err != nil || out.Result.Text != "from memory" || len(model.requests[0].Tools) != 0 {
		t.Fatalf("outcome: %v %+v, tools %d", out.Err, out.Result, len(model.requests[0].Tools))
	}
}

func TestSubAgents_parallel_agents(t *testing.T) {
	t.Parallel()
	// Two Agent calls in one turn run side by side, each with its own
	// session and exclusive calls.
	var mu sync.Mutex
	turns := map[string]int{}
	m := modelFunc(func(req llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		prompt := req.Messages[0].TextOf()
		turns[prompt]++
		if turns[prompt] == 1 {
			return &llm.Response{Message: answer(use("u-"+prompt, "Poke", prompt))}, nil
		}
		return &llm.Response{Message: answer(text("done " + prompt))}, nil
	})
	p, uc, pokes := setup(t, permissions.ModeDefault, m)
	outs := p.RunCalls(context.Background(), uc, []orchestrator.Call{
		{ID: "a", Name: "Agent", Input: json.RawMessage(`{"description":"A","prompt":"one"}`)},
		{ID: "b", Name: "Task", Input: json.RawMessage(`{"description":"B","prompt":"two"}`)},
	}, orchestrator.CallEvents{})
	if outs[0].Result.Text != "done one" || outs[1].Result.Text != "done two" {
		t.Errorf("answers = %q, %q", outs[0].Result.Text, outs[1].Result.Text)
	}
	if len(*pokes) != 2 {
		t.Errorf("pokes = %q", *pokes)
	}
}

type modelFunc func(llm.Request) (*llm.Response, error)

func (f modelFunc) Stream(_ context.Context, req llm.Request, _ llm.Handler) (*llm.Response, error) {
	return f(req)
}

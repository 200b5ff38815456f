package subagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/subagent"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/workflow"
)

type probeInput struct {
	Q string `json:"q"`
}

// probe is read-only and concurrency-safe; poke writes and runs alone.
func testTools(pokes *[]string, mu *sync.Mutex) []tools.Tool {
	probe := tools.New(tools.Spec[probeInput]{
		Name: "Probe", Description: "reads",
		ReadOnly:        func(*probeInput) bool { return true },
		ConcurrencySafe: func(*probeInput) bool { return true },
		Run: func(_ context.Context, in *probeInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			return &tools.Result{Text: fmt.Sprintf("probed %s in %s mode", in.Q, uc.Session.Mode())}, nil
		},
	})
	poke := tools.New(tools.Spec[probeInput]{
		Name: "Poke", Description: "writes",
		Run: func(_ context.Context, in *probeInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			mu.Lock()
			*pokes = append(*pokes, in.Q)
			mu.Unlock()
			return &tools.Result{Text: "poked " + in.Q}, nil
		},
	})
	return []tools.Tool{probe, poke, workflow.Agent(workflow.AgentOptions{}), workflow.AskUserQuestion()}
}

// script is a Model that plays a list of answers and records each request.
type script struct {
	mu       sync.Mutex
	answers  []*subagent.Response
	requests []subagent.Request
	loop     *subagent.Response // answered forever once answers run out
}

func (s *script) Complete(_ context.Context, req subagent.Request) (*subagent.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Messages = append([]subagent.Message(nil), req.Messages...)
	s.requests = append(s.requests, req)
	if len(s.answers) == 0 {
		if s.loop != nil {
			return s.loop, nil
		}
		return nil, fmt.Errorf("script exhausted")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func use(id, name, q string) subagent.Block {
	return subagent.Block{Kind: subagent.ToolUse, ID: id, Name: name, Input: json.RawMessage(fmt.Sprintf(`{"q":%q}`, q))}
}

func text(s string) subagent.Block { return subagent.Block{Kind: subagent.Text, Text: s} }

func setup(t *testing.T, mode permissions.Mode, model subagent.Model) (*orchestrator.Pipeline, *tools.UseContext, *[]string) {
	t.Helper()
	var pokes []string
	var mu sync.Mutex
	pool, err := orchestrator.AssemblePool(testTools(&pokes, &mu), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &orchestrator.Pipeline{Pool: pool, MaxParallel: 2}
	sess, err := tools.NewSession(tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir(), Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	uc := &tools.UseContext{Session: sess, SubAgents: &subagent.Runner{Pipeline: p, Model: model, MaxTurns: 5}}
	return p, uc, &pokes
}

func toolNames(defs []subagent.ToolDef) string {
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

func TestRunner_tool_calls_then_final_answer(t *testing.T) {
	model := &script{answers: []*subagent.Response{
		{Blocks: []subagent.Block{text("Looking."), use("u1", "Probe", "a"), use("u2", "Probe", "b")}, StopReason: "toolUse"},
		// An exclusive call while the parent's Agent call holds a place in
		// the parent session's gate: it must not wait on it.
		{Blocks: []subagent.Block{use("u3", "Poke", "c")}},
		{Blocks: []subagent.Block{text("Done: probed a and b, poked c.")}, StopReason: "endTurn"},
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
	if got := toolNames(first.Tools); got != "Poke,Probe" {
		t.Errorf("offered tools = %s, want Poke,Probe (no Agent, no AskUserQuestion)", got)
	}
	if !strings.Contains(first.System, "sub-agent") || first.Messages[0].Blocks[0].Text != "Probe a and b, poke c" {
		t.Errorf("first request = %+v", first)
	}
	second := model.requests[1]
	results := second.Messages[2].Blocks
	if second.Messages[2].Role != "user" || len(results) != 2 || results[0].ID != "u1" || results[0].Text != "probed a in default mode" || results[1].ID != "u2" {
		t.Errorf("tool results = %+v", second.Messages[2])
	}
}

func TestRunner_read_only_sub_agent(t *testing.T) {
	model := &script{answers: []*subagent.Response{
		{Blocks: []subagent.Block{use("u1", "Poke", "x"), use("u2", "Agent", "y"), use("u3", "Nope", "z")}},
		{Blocks: []subagent.Block{text("could not poke")}},
	}}
	p, uc, pokes := setup(t, permissions.ModeDefault, model)
	out := runAgent(p, uc, `{"description":"Look","prompt":"p","subagent_type":"Explore"}`)
	if out.Err != nil || out.Result.Text != "could not poke" {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
	if len(*pokes) != 0 {
		t.Errorf("a read-only sub-agent poked: %q", *pokes)
	}
	if got := toolNames(model.requests[0].Tools); got != "Probe" {
		t.Errorf("offered tools = %s, want Probe", got)
	}
	results := model.requests[1].Messages[2].Blocks
	wants := []string{"Poke is not one of this sub-agent's tools", "Agent is not one of this sub-agent's tools", `unknown tool: "Nope"`}
	for i, w := range wants {
		if !results[i].IsError || !strings.Contains(results[i].Text, w) {
			t.Errorf("result %d = %+v, want an error containing %q", i, results[i], w)
		}
	}
}

func TestRunner_sub_agent_inherits_plan_mode(t *testing.T) {
	model := &script{answers: []*subagent.Response{
		{Blocks: []subagent.Block{use("u1", "Probe", "q")}},
		{Blocks: []subagent.Block{text("ok")}},
	}}
	p, uc, _ := setup(t, permissions.ModePlan, model)
	out := runAgent(p, uc, `{"description":"Look","prompt":"p","subagent_type":"Plan"}`)
	if out.Err != nil || out.Result.Text != "ok" {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
	if got := model.requests[1].Messages[2].Blocks[0].Text; got != "probed q in plan mode" {
		t.Errorf("result = %q", got)
	}
}

func TestRunner_turn_limit(t *testing.T) {
	model := &script{loop: &subagent.Response{Blocks: []subagent.Block{text("still going"), use("u", "Probe", "again")}}}
	p, uc, _ := setup(t, permissions.ModeDefault, model)
	out := runAgent(p, uc, `{"description":"Forever","prompt":"p"}`)
	if out.Err != nil || !out.Result.IsError || !strings.Contains(out.Result.Text, "stopped after 5 turns without finishing; its last message was:\nstill going") {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
	if len(model.requests) != 5 {
		t.Errorf("%d model calls, want 5", len(model.requests))
	}
}

func TestRunner_model_error(t *testing.T) {
	p, uc, _ := setup(t, permissions.ModeDefault, &script{})
	out := runAgent(p, uc, `{"description":"Fail","prompt":"p"}`)
	if out.Err != nil || !out.Result.IsError || !strings.Contains(out.Result.Text, "the sub-agent (Fail) failed: turn 1: script exhausted") {
		t.Fatalf("outcome: %v %+v", out.Err, out.Result)
	}
}

func TestRunner_no_tools(t *testing.T) {
	model := &script{answers: []*subagent.Response{{Blocks: []subagent.Block{text("from memory")}}}}
	p, uc, _ := setup(t, permissions.ModeDefault, model)
	uc.SubAgents.(*subagent.Runner).NoTools = true
	out := runAgent(p, uc, `{"description":"Recall","prompt":"p"}`)
	if out.Err != nil || out.Result.Text != "from memory" || len(model.requests[0].Tools) != 0 {
		t.Fatalf("outcome: %v %+v, tools %d", out.Err, out.Result, len(model.requests[0].Tools))
	}
}

func TestRunner_parallel_agents(t *testing.T) {
	// Two Agent calls in one turn run side by side, each with its own
	// session and exclusive calls.
	var mu sync.Mutex
	turns := map[string]int{}
	m := modelFunc(func(req subagent.Request) (*subagent.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		prompt := req.Messages[0].Blocks[0].Text
		turns[prompt]++
		if turns[prompt] == 1 {
			return &subagent.Response{Blocks: []subagent.Block{use("u-"+prompt, "Poke", prompt)}}, nil
		}
		return &subagent.Response{Blocks: []subagent.Block{text("done " + prompt)}}, nil
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

type modelFunc func(subagent.Request) (*subagent.Response, error)

func (f modelFunc) Complete(_ context.Context, req subagent.Request) (*subagent.Response, error) {
	return f(req)
}

package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
)

// fakeRunner records the request and answers with a fixed text.
type fakeRunner struct {
	req    tools.SubAgentRequest
	answer string
	err    error
}

func (r *fakeRunner) RunSubAgent(_ context.Context, req tools.SubAgentRequest) (string, error) {
	r.req = req
	return r.answer, r.err
}

func TestAgent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		args         map[string]any
		runner       *fakeRunner
		wantType     string
		wantReadOnly bool
		wantText     string
		wantErr      string
	}{
		{
			name:     "default_is_general_purpose",
			args:     map[string]any{"description": "Find the bug", "prompt": "Look for the bug in x.go"},
			runner:   &fakeRunner{answer: "  It is on line 3.\n"},
			wantType: "general-purpose", wantText: "It is on line 3.",
		},
		{
			name:     "explore_is_read_only",
			args:     map[string]any{"description": "Map the code", "prompt": "Where is auth?", "subagent_type": "Explore"},
			runner:   &fakeRunner{answer: "in auth.go"},
			wantType: "Explore", wantReadOnly: true, wantText: "in auth.go",
		},
		{
			name:     "empty_answer_is_said",
			args:     map[string]any{"description": "d", "prompt": "p", "subagent_type": "Plan"},
			runner:   &fakeRunner{answer: " "},
			wantType: "Plan", wantReadOnly: true, wantText: "finished without a final answer",
		},
		{
			name:    "runner_error",
			args:    map[string]any{"description": "d", "prompt": "p"},
			runner:  &fakeRunner{err: errors.New("turn 2: sampling refused")},
			wantErr: "the sub-agent (d) failed: turn 2: sampling refused",
		},
		{
			name:    "no_runner",
			args:    map[string]any{"description": "d", "prompt": "p"},
			wantErr: "client must support MCP sampling",
		},
		{
			name:    "unknown_type",
			args:    map[string]any{"description": "d", "prompt": "p", "subagent_type": "Wizard"},
			runner:  &fakeRunner{},
			wantErr: `parameter "subagent_type" must be one of "general-purpose", "Explore" or "Plan", got "Wizard"`,
		},
		{
			name:    "blank_prompt",
			args:    map[string]any{"description": "d", "prompt": "  "},
			runner:  &fakeRunner{},
			wantErr: "prompt must describe",
		},
	}
	tool := Agent(AgentOptions{MaxTurns: 7})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			uc := &tools.UseContext{Session: newSession(t, "")}
			if c.runner != nil {
				uc.SubAgents = c.runner
			}
			res, err := call(t, tool, uc, c.args)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text, c.wantText) {
				t.Errorf("text = %q, want it to contain %q", res.Text, c.wantText)
			}
			req := c.runner.req
			if req.Type != c.wantType || req.ReadOnly != c.wantReadOnly || req.MaxTurns != 7 || req.Parent == nil || req.Parent.Session != uc.Session ||
				req.Prompt != c.args["prompt"] || req.SystemPrompt == "" {
				t.Errorf("request = %+v", req)
			}
			if out := res.Output.(AgentOutput); out.Status != "completed" || out.SubagentType != c.wantType {
				t.Errorf("output = %+v", out)
			}
			in, _ := tool.Decode([]byte(`{"description":"d","prompt":"p","subagent_type":"` + c.wantType + `"}`))
			if in.ReadOnly() != c.wantReadOnly || !in.ConcurrencySafe() || in.Destructive() {
				t.Errorf("read-only %v, concurrency-safe %v, destructive %v", in.ReadOnly(), in.ConcurrencySafe(), in.Destructive())
			}
		})
	}
	if got := tool.Aliases; len(got) != 1 || got[0] != "Task" {
		t.Errorf("aliases = %q, want [Task]", got)
	}
}

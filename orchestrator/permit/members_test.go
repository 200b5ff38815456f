package permit

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// TestFieldRuleSeesTheMemberTheToolReads: a field:value rule reads a
// member by its exact name. An upstream tool whose schema accepts extra
// members may read one spelled in another case as that field (Go's
// encoding/json does), so such a member is refused before the rule is
// judged; for built-in tools the schema refuses it anyway.
func TestFieldRuleSeesTheMemberTheToolReads(t *testing.T) {
	t.Parallel()
	schema := &jsonschema.Schema{Type: "object",
		Properties:           map[string]*jsonschema.Schema{"cmd": {Type: "string"}},
		AdditionalProperties: &jsonschema.Schema{}}
	ran := false
	up := tools.NewRaw(tools.Tool{Name: "mcp__srv__run", Upstream: "srv", InputSchema: schema},
		func(context.Context, json.RawMessage, *tools.UseContext, tools.Progress) (*tools.Result, error) {
			ran = true
			return &tools.Result{}, nil
		})
	f := newFixture(t, permissions.ModeDefault)
	rs := rules(t, f.dir, []string{"mcp__srv__run(cmd:*rm*)"}, nil, []string{"mcp__srv__run"})
	pool, err := orchestrator.AssemblePool([]*tools.Tool{up}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &orchestrator.Pipeline{Pool: pool, Permit: New(Options{Rules: rs})}
	for _, tt := range []struct {
		input string
		runs  bool
	}{
		{`{"cmd":"ls","other":1}`, true},
		{`{"cmd":"rm -rf x"}`, false},
		{`{"CMD":"rm -rf x"}`, false},
		{`{"cmd":"ls","Cmd":"rm -rf x"}`, false},
		{`{"\u0043md":"rm -rf x"}`, false},
	} {
		ran = false
		out := p.Run(context.Background(), &tools.UseContext{Session: f.sess},
			orchestrator.Call{ID: "1", Name: up.Name, Input: json.RawMessage(tt.input)}, nil)
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		if ran != tt.runs {
			t.Errorf("%s: ran %v, want %v (%v: %q)", tt.input, ran, tt.runs, out.Decision.Behavior, out.Result.Text)
		}
	}
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// printAsker is chat -p's asker: nobody is there to answer. A permission
// question is refused, telling the model (through the permitter) that the
// user was not available and which flag or rule would allow the call; a
// form (AskUserQuestion, ExitPlanMode) fails, telling the model to go on
// without one. Every refusal is kept for the result and said on stderr
// as it happens.
type printAsker struct {
	stderr io.Writer

	mu      sync.Mutex
	refused []printRefusal
	seen    map[string]bool // call ids already reported
}

// printRefusal is one refused call, as the JSON result lists it.
type printRefusal struct {
	Tool   string          `json:"tool_name"`
	CallID string          `json:"tool_use_id"`
	Input  json.RawMessage `json:"tool_input"`
	Reason string          `json:"reason"`
	// Rule would allow the call (--allowed-tools or permissions.allow);
	// empty when no rule can.
	Rule string `json:"rule,omitempty"`
}

var _ tools.PermissionAsker = (*printAsker)(nil)

func newPrintAsker(stderr io.Writer) *printAsker {
	return &printAsker{stderr: stderr, seen: map[string]bool{}}
}

// Ask refuses a form: there is nobody to fill it in.
func (a *printAsker) Ask(context.Context, string, map[string]any) (tools.Answer, error) {
	return tools.Answer{}, fmt.Errorf("%w: agent-mcp chat -p runs without a person at the terminal; ask the questions in your reply instead, or go on with your best judgement and say what you assumed", tools.ErrNobodyToAsk)
}

// AskPermission refuses the call and names what would allow it.
func (a *printAsker) AskPermission(_ context.Context, q *tools.PermissionQuestion) (tools.PermissionAnswer, error) {
	how := "no permission rule can allow it; run the prompt in an interactive chat to approve it"
	if q.Rule != "" {
		how = fmt.Sprintf("to allow it, run chat -p with --allowed-tools '%s' or add that rule to permissions.allow in a settings file", q.Rule)
	}
	err := fmt.Errorf("%w: agent-mcp chat -p asks nobody; %s", tools.ErrNobodyToAsk, how)
	// Recorded here too: a sub-agent's calls reach the asker but not the
	// main loop's events.
	a.record(q.Tool, q.CallID, q.Input, q.Reason+" The user was not available to approve it ("+err.Error()+").", q.Rule)
	return tools.PermissionAnswer{}, err
}

// toolEnd keeps and reports a call that was not allowed.
func (a *printAsker) toolEnd(out orchestrator.Outcome) {
	d := out.Decision
	if d.Behavior != permissions.Deny && d.Behavior != permissions.Ask {
		return
	}
	a.record(out.Call.Name, out.Call.ID, out.Call.Input, d.Reason, d.Suggestion)
}

// record keeps a refusal and says it on stderr, once per call.
func (a *printAsker) record(tool, id string, input []byte, reason, rule string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id != "" && a.seen[id] {
		return
	}
	a.seen[id] = true
	r := printRefusal{Tool: tool, CallID: id, Input: json.RawMessage(input), Reason: reason, Rule: rule}
	if len(r.Input) == 0 || !json.Valid(r.Input) {
		r.Input = json.RawMessage("{}")
	}
	a.refused = append(a.refused, r)
	fmt.Fprintf(a.stderr, "agent-mcp chat -p: refused %s (%s): %s\n", tool, id, reason)
}

// refusals are the calls refused so far, in order; never nil.
func (a *printAsker) refusals() []printRefusal {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]printRefusal{}, a.refused...)
}

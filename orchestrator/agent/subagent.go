package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Sub-agents' defaults.
const (
	// defaultSubAgentMaxTurns bounds a sub-agent's model calls.
	defaultSubAgentMaxTurns = 50
	// defaultSubAgentMaxTokens bounds one of a sub-agent's answers.
	defaultSubAgentMaxTokens = 8192
)

// SubAgents runs the Agent tool's sub-agents: it implements
// tools.SubAgentRunner with an [Agent], the same loop chat runs, on its own
// conversation, a subset of the pool and a turn limit. Chat gives it its
// provider's model; the MCP server gives it the client's model through
// sampling.
type SubAgents struct {
	// Pipeline runs the sub-agents' tool calls; its Pool is what a
	// sub-agent can be offered, its Permit and Hooks apply to every call.
	Pipeline *orchestrator.Pipeline
	// Model answers the sub-agents' turns.
	Model llm.Model
	// NoTools runs sub-agents without tools (a model that cannot use them).
	NoTools bool
	// MaxTurns is used when a request sets none; 0 means
	// defaultSubAgentMaxTurns.
	MaxTurns int
	// MaxTokens bounds one answer; 0 means defaultSubAgentMaxTokens.
	MaxTokens int
	// ContextWindow is the model's context size; 0 means
	// defaultContextWindow.
	ContextWindow int
	// Exclude lists further tools never offered, by name. Tools acting on
	// the conversation itself (tools.Tool.ActsOnConversation: Agent,
	// AskUserQuestion, the plan mode switches) never are.
	Exclude []string
}

// RunSubAgent runs req's task to a final answer: a model turn, the tool
// calls it asked for (through the pipeline, in a session of its own that
// starts where the parent's is), and again, until the model answers
// without calling a tool or the turn limit is reached.
//
// The sub-agent's session is separate so that its calls have their own
// concurrency gate (the parent's Agent call holds a place in the parent's)
// and its file reads, working directory and background tasks stay its own;
// it starts in the parent's directory and permission mode, asks the same
// user, and is closed when the sub-agent ends.
func (r *SubAgents) RunSubAgent(ctx context.Context, req tools.SubAgentRequest) (string, error) {
	if r.Pipeline == nil || r.Pipeline.Pool == nil || r.Model == nil {
		return "", errors.New("sub-agent runner is missing its pipeline or model")
	}
	parent := req.Parent
	if parent == nil || parent.Session == nil {
		return "", errors.New("sub-agent request without the calling session")
	}
	ps := parent.Session
	child, err := tools.NewSession(tools.SessionOptions{
		Cwd:       ps.Cwd(),
		WorkDirs:  ps.WorkDirs(),
		Mode:      ps.Mode(),
		StateRoot: filepath.Dir(ps.StateDir()),
	})
	if err != nil {
		return "", fmt.Errorf("starting the sub-agent's session: %w", err)
	}
	defer child.Close()

	// The sub-agent sees only the tools it is offered: a call to any other
	// is answered like a call to a tool that does not exist.
	pipeline := *r.Pipeline
	pipeline.Pool = r.Pipeline.Pool.Subset(r.offers(req))
	if req.ReadOnly {
		pipeline.Permit = readOnlyPermit{next: r.Pipeline.Permit}
	}
	maxTurns := firstPositive(req.MaxTurns, r.MaxTurns, defaultSubAgentMaxTurns)
	progress := req.Progress
	if progress == nil {
		progress = func(tools.ProgressUpdate) {}
	}
	var calls int
	a, err := New(Options{
		Model:         r.Model,
		Pipeline:      &pipeline,
		UseContext:    tools.UseContext{Session: child, Asker: parent.Asker, LaterAsker: parent.LaterAsker, Sampler: parent.Sampler, Logger: parent.Logger},
		System:        req.SystemPrompt,
		MaxTurns:      maxTurns,
		MaxTokens:     firstPositive(r.MaxTokens, defaultSubAgentMaxTokens),
		ContextWindow: r.ContextWindow,
		Logger:        parent.Logger,
		Events: Events{
			// Every call the sub-agent starts is progress for the
			// parent's Agent call (the executor calls this under its
			// lock, so the count is not raced).
			ToolStart: func(c orchestrator.Call) {
				calls++
				progress(tools.ProgressUpdate{Progress: float64(calls), Message: fmt.Sprintf("%s: %s", req.Description, c.Name)})
			},
		},
	})
	if err != nil {
		return "", err
	}
	res, err := a.Run(ctx, req.Prompt)
	switch {
	case errors.Is(err, ErrMaxTurns):
		last := lastText(a.Messages())
		if last == "" {
			last = "(no text yet)"
		}
		return "", fmt.Errorf("the sub-agent stopped after %d turns without finishing; its last message was:\n%s", maxTurns, last)
	case err != nil && ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", fmt.Errorf("turn %d: %w", res.Turns, err)
	}
	return lastText(a.Messages()), nil
}

// firstPositive returns the first of vals that is positive (0 if none is).
func firstPositive(vals ...int) int {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}

// lastText is the text of the last assistant message that has any.
func lastText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.Assistant {
			continue
		}
		var texts []string
		for _, b := range msgs[i].Content {
			if b.Type == llm.TextBlock && strings.TrimSpace(b.Text) != "" {
				texts = append(texts, b.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return ""
}

// offers returns which of the pool's tools the sub-agent of req is given.
func (r *SubAgents) offers(req tools.SubAgentRequest) func(*tools.Tool) bool {
	exclude := r.Exclude
	return func(t *tools.Tool) bool {
		name := t.Name
		switch {
		case r.NoTools, t.ActsOnConversation, slices.Contains(exclude, name), req.Tools != nil && !slices.Contains(req.Tools, name):
			return false
		case req.ReadOnly:
			// Tools read-only in general, and those whose handler finds
			// some calls read-only: Bash, whose read-only commands (ls, git
			// log, grep) are an explorer's staple. Each call is still
			// checked (readOnlyPermit).
			return t.CanBeReadOnly()
		}
		return true
	}
}

// readOnlyPermit is a read-only sub-agent's Permitter: calls that are not
// read-only are refused; the rest is decided by the parent pipeline's
// Permitter.
type readOnlyPermit struct {
	next orchestrator.Permitter
}

func (p readOnlyPermit) Decide(ctx context.Context, req orchestrator.PermissionRequest) permissions.Decision {
	if !req.Input.ReadOnly() {
		return permissions.Decision{Behavior: permissions.Deny, Reason: "This sub-agent may only make read-only calls."}
	}
	next := p.next
	if next == nil {
		next = orchestrator.AllowUnlessDenied
	}
	return next.Decide(ctx, req)
}

package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Runner's defaults.
const (
	// DefaultMaxTurns bounds a sub-agent's model calls.
	DefaultMaxTurns = 50
	// DefaultMaxTokens bounds one model answer.
	DefaultMaxTokens = 8192
)

// DefaultExclude are the tools a sub-agent never gets: it cannot start
// sub-agents of its own, talk to the user, or switch the plan mode of a
// session that is not the user's.
var DefaultExclude = []string{"Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode"}

// BlockKind says what a Block carries.
type BlockKind int

const (
	// Text is text from the model or the user.
	Text BlockKind = iota
	// ToolUse is the model's request to call a tool.
	ToolUse
	// ToolResult answers a ToolUse.
	ToolResult
)

// Block is one content block of a Message.
type Block struct {
	Kind BlockKind
	// Text is the text of a Text or ToolResult block.
	Text string
	// ID is a ToolUse's id, and the id a ToolResult answers.
	ID string
	// Name and Input are a ToolUse's tool and arguments (a JSON object).
	Name  string
	Input json.RawMessage
	// IsError marks a failed ToolResult.
	IsError bool
}

// Message is one turn of the conversation: Role is "user" or "assistant".
type Message struct {
	Role   string
	Blocks []Block
}

// ToolDef is a tool as offered to the model.
type ToolDef struct {
	Name        string
	Description string
	InputSchema *jsonschema.Schema
}

// Request is one model call.
type Request struct {
	System    string
	Messages  []Message
	Tools     []ToolDef
	MaxTokens int
}

// Response is the model's answer: text and tool uses.
type Response struct {
	Blocks []Block
	// StopReason is what the model reported ("endTurn", "toolUse", ...).
	StopReason string
}

// Model is a language model that can use tools: MCP sampling with tools
// in the server, or chat's provider.
type Model interface {
	Complete(ctx context.Context, req Request) (*Response, error)
}

// Runner runs sub-agents: it implements tools.SubAgentRunner on a Model
// and the Pipeline every tool call goes through.
type Runner struct {
	// Pipeline runs the sub-agent's tool calls; its Pool is what the
	// sub-agent can be offered.
	Pipeline *orchestrator.Pipeline
	// Model answers the sub-agent's turns.
	Model Model
	// NoTools runs sub-agents without tools (a model that cannot use them).
	NoTools bool
	// MaxTurns is used when a request sets none; 0 means DefaultMaxTurns.
	MaxTurns int
	// MaxTokens bounds one answer; 0 means DefaultMaxTokens.
	MaxTokens int
	// Exclude lists tools never offered; nil means DefaultExclude.
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
func (r *Runner) RunSubAgent(ctx context.Context, req tools.SubAgentRequest) (string, error) {
	if r.Pipeline == nil || r.Model == nil {
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
	uc := &tools.UseContext{Session: child, Asker: parent.Asker, Sampler: parent.Sampler, Logger: parent.Logger}

	offered, defs := r.offer(req)
	pipeline := *r.Pipeline
	pipeline.Permit = restrict{offered: offered, readOnly: req.ReadOnly, next: r.Pipeline.Permit}

	maxTurns := req.MaxTurns
	if maxTurns <= 0 {
		maxTurns = r.MaxTurns
	}
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	progress := req.Progress
	if progress == nil {
		progress = func(tools.ProgressUpdate) {}
	}

	msgs := []Message{{Role: "user", Blocks: []Block{{Kind: Text, Text: req.Prompt}}}}
	last := ""
	for turn := 1; turn <= maxTurns; turn++ {
		resp, err := r.Model.Complete(ctx, Request{System: req.SystemPrompt, Messages: msgs, Tools: defs, MaxTokens: maxTokens})
		if err != nil {
			return "", fmt.Errorf("turn %d: %w", turn, err)
		}
		msgs = append(msgs, Message{Role: "assistant", Blocks: resp.Blocks})
		var calls []orchestrator.Call
		var texts []string
		for _, b := range resp.Blocks {
			switch b.Kind {
			case Text:
				if strings.TrimSpace(b.Text) != "" {
					texts = append(texts, b.Text)
				}
			case ToolUse:
				calls = append(calls, orchestrator.Call{ID: b.ID, Name: b.Name, Input: b.Input})
			}
		}
		if len(texts) > 0 {
			last = strings.Join(texts, "\n")
		}
		if len(calls) == 0 {
			return last, nil
		}
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = c.Name
		}
		progress(tools.ProgressUpdate{Progress: float64(turn), Message: fmt.Sprintf("%s: turn %d, %s", req.Description, turn, strings.Join(names, ", "))})
		// Calls of tools the sub-agent was not given are refused here, before
		// the pipeline would validate their input against a schema the
		// model never saw.
		results := make([]Block, len(calls))
		var run []orchestrator.Call
		var at []int
		for i, c := range calls {
			if t, ok := r.Pipeline.Pool.Find(c.Name); ok && !offered[t.Name()] {
				results[i] = Block{Kind: ToolResult, ID: c.ID, IsError: true,
					Text: fmt.Sprintf("%s is not one of this sub-agent's tools; use only the tools you were given.", c.Name)}
				continue
			}
			run = append(run, c)
			at = append(at, i)
		}
		for j, o := range pipeline.RunCalls(ctx, uc, run, orchestrator.CallEvents{}) {
			results[at[j]] = resultBlock(o)
		}
		msgs = append(msgs, Message{Role: "user", Blocks: results})
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	if last == "" {
		last = "(no text yet)"
	}
	return "", fmt.Errorf("the sub-agent stopped after %d turns without finishing; its last message was:\n%s", maxTurns, last)
}

// offer picks the tools the sub-agent may use and describes them.
func (r *Runner) offer(req tools.SubAgentRequest) (map[string]bool, []ToolDef) {
	offered := map[string]bool{}
	if r.NoTools {
		return offered, nil
	}
	exclude := r.Exclude
	if exclude == nil {
		exclude = DefaultExclude
	}
	var defs []ToolDef
	for _, t := range r.Pipeline.Pool.Tools() {
		name := t.Name()
		if slices.Contains(exclude, name) || (req.Tools != nil && !slices.Contains(req.Tools, name)) {
			continue
		}
		if req.ReadOnly && !mayReadOnly(t) {
			continue
		}
		offered[name] = true
		defs = append(defs, ToolDef{Name: name, Description: t.Description(), InputSchema: t.Schema()})
	}
	return offered, defs
}

// mayReadOnly reports whether a read-only sub-agent should be offered t:
// tools read-only in general, and Bash, whose read-only commands (ls, git
// log, grep) are an explorer's staple; each call is still checked.
func mayReadOnly(t tools.Tool) bool {
	if t.Name() == "Bash" {
		return true
	}
	in, err := t.Decode(json.RawMessage("{}"))
	return err == nil && t.IsReadOnly(in)
}

// restrict is the sub-agent's Permitter: tools not offered and, for a
// read-only sub-agent, calls that are not read-only are refused; the rest
// is decided by the parent pipeline's Permitter.
type restrict struct {
	offered  map[string]bool
	readOnly bool
	next     orchestrator.Permitter
}

func (p restrict) Decide(ctx context.Context, req orchestrator.PermissionRequest) permissions.Decision {
	name := req.Tool.Name()
	if !p.offered[name] {
		return permissions.Decision{Behavior: permissions.Deny, Reason: name + " is not one of this sub-agent's tools."}
	}
	if p.readOnly && !req.Tool.IsReadOnly(req.Input) {
		return permissions.Decision{Behavior: permissions.Deny, Reason: "This sub-agent may only make read-only calls."}
	}
	next := p.next
	if next == nil {
		next = orchestrator.AllowUnlessDenied
	}
	return next.Decide(ctx, req)
}

// resultBlock turns a call's outcome into the tool result the model reads.
func resultBlock(o orchestrator.Outcome) Block {
	b := Block{Kind: ToolResult, ID: o.Call.ID}
	if o.Err != nil {
		b.Text, b.IsError = o.Err.Error(), true
		return b
	}
	parts := []string{}
	if o.Result.Text != "" {
		parts = append(parts, o.Result.Text)
	}
	for _, c := range o.Result.Extra {
		switch c.Kind {
		case tools.TextContent:
			parts = append(parts, c.Text)
		case tools.ImageContent:
			parts = append(parts, fmt.Sprintf("[%s image not shown to the sub-agent]", c.MIMEType))
		case tools.LinkContent:
			parts = append(parts, "Resource: "+c.URI)
		}
	}
	b.Text, b.IsError = strings.Join(parts, "\n"), o.Result.IsError
	return b
}

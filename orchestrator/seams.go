package orchestrator

import (
	"context"
	"encoding/json"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// PermissionRequest is everything a Permitter sees of a call.
type PermissionRequest struct {
	Tool  *tools.Tool
	Input *tools.Input
	// Raw is the call's arguments as JSON, after any hook rewrote them.
	Raw json.RawMessage
	UC  *tools.UseContext
	// HookDecision is what PreToolUse hooks said (Passthrough if nothing).
	// A hook's allow skips asking but never overrides a deny or ask rule.
	HookDecision permissions.Decision
}

// Permitter makes the permission decision for a call. It may ask the user
// itself (through req.UC.Asker); the pipeline runs the call only on Allow,
// and treats an Ask it is handed back as a refusal, since nobody answered.
type Permitter interface {
	Decide(ctx context.Context, req PermissionRequest) permissions.Decision
}

// PermitterFunc adapts a function to Permitter.
type PermitterFunc func(ctx context.Context, req PermissionRequest) permissions.Decision

// Decide calls f.
func (f PermitterFunc) Decide(ctx context.Context, req PermissionRequest) permissions.Decision {
	return f(ctx, req)
}

// AllowUnlessDenied is the permitter used when no rules are configured: the
// hooks' deny or ask stands, everything else is allowed.
var AllowUnlessDenied Permitter = PermitterFunc(func(_ context.Context, req PermissionRequest) permissions.Decision {
	if d := req.HookDecision; d.Behavior == permissions.Deny || d.Behavior == permissions.Ask {
		return d
	}
	return permissions.Decision{Behavior: permissions.Allow}
})

// HookEvent is the input of a tool hook (docs/tools.md §10).
type HookEvent struct {
	Tool  *tools.Tool
	Name  string // the name the tool is registered under
	Input json.RawMessage
	UC    *tools.UseContext
	// Result is set for PostToolUse.
	Result *tools.Result
}

// PreOutcome is what PreToolUse hooks concluded.
type PreOutcome struct {
	// Decision is Passthrough unless a hook decided.
	Decision permissions.Decision
	// UpdatedInput replaces the call's arguments when non-nil.
	UpdatedInput json.RawMessage
	// AdditionalContext is appended to the result for the model.
	AdditionalContext string
	// Block stops the call; Reason is given to the model.
	Block  bool
	Reason string
}

// PostOutcome is what PostToolUse hooks concluded.
type PostOutcome struct {
	// AdditionalContext is appended to the result for the model.
	AdditionalContext string
	// Feedback is a blocking hook's message for the model (the call already
	// ran; the message is appended and the result marked as an error).
	Feedback string
}

// Hooks runs user hooks around tool calls. Errors are reported in the log
// and do not stop the call; blocking is expressed in the outcomes.
type Hooks interface {
	PreToolUse(ctx context.Context, ev HookEvent) (PreOutcome, error)
	PostToolUse(ctx context.Context, ev HookEvent) (PostOutcome, error)
}

package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/agent-mcp/agent-mcp/internal/redact"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Call is one request to run a tool.
type Call struct {
	// ID identifies the call (the model's tool_use id, or the request id).
	ID string
	// Name is the name the caller used: a tool's name or one of its aliases.
	Name  string
	Input json.RawMessage
}

// Outcome is what running a Call produced.
type Outcome struct {
	Call Call
	// Tool is nil when no tool answers to Call.Name (Err is then ErrUnknownTool).
	Tool *tools.Tool
	// Result is the rendered, budgeted result; nil only when Err is set.
	Result *tools.Result
	// Persisted is set when the result was over budget and saved.
	Persisted *Persisted
	// Decision is the permission decision the call got.
	Decision permissions.Decision
	// Err is a protocol-level failure: the call never reached a tool.
	Err error
}

// ErrUnknownTool is wrapped by the error of a call to a name no tool has.
var ErrUnknownTool = errors.New("unknown tool")

// Pipeline runs tool calls. Every call, from the MCP server or the chat
// loop, goes through the same steps in runPipeline.
type Pipeline struct {
	Pool *Pool
	// Permit decides permission; nil means AllowUnlessDenied.
	Permit Permitter
	// Hooks runs PreToolUse/PostToolUse hooks; nil means none.
	Hooks Hooks
	// MaxParallel bounds concurrency-safe calls running at once per session.
	MaxParallel int
	// MaxInputBytes is the largest call input (the arguments' JSON text)
	// accepted; 0 means DefaultMaxInputBytes. A larger one is refused
	// before it is validated or decoded, so the memory a call costs is
	// bounded: a Write's or Edit's content is nearly all of its input.
	MaxInputBytes int
	// Logger receives pipeline diagnostics; nil discards them.
	Logger *slog.Logger
	// Tracer, if set, is told of each step of every call (for traces:
	// a span per step under the caller's span); nil traces nothing.
	Tracer Tracer
	// Redact, if set, replaces the secrets it knows in every result, its
	// persisted file and every progress message before they leave the
	// pipeline (see redactResult); nil redacts nothing.
	Redact *redact.Redactor
}

// Tracer is told of the steps of a call as the pipeline takes them.
type Tracer interface {
	// Step starts the step named step of a call of tool running under
	// ctx; it returns the context the step runs in and the function that
	// ends the step with its error (nil when it went through).
	Step(ctx context.Context, tool, step string) (context.Context, func(err error))
}

// Pipeline steps as a Tracer is told of them.
const (
	StepValidate   = "validate"
	StepPreHooks   = "pre_tool_use_hooks"
	StepWait       = "wait_for_session_gate"
	StepPermission = "permission"
	StepCall       = "call"
	StepPostHooks  = "post_tool_use_hooks"
	StepRender     = "render_and_budget"
)

// step starts a step for p.Tracer; without one it costs nothing.
func (p *Pipeline) step(ctx context.Context, tool, name string) (context.Context, func(error)) {
	if p.Tracer == nil {
		return ctx, func(error) {}
	}
	return p.Tracer.Step(ctx, tool, name)
}

// DefaultMaxInputBytes is the largest call input accepted unless
// configured: 10 MiB, room for a Write of any source file while a call's
// transient memory (several copies of its input while the MCP SDK and the
// pipeline decode it) stays in the low hundreds of megabytes.
const DefaultMaxInputBytes = 10 << 20

// InputLimit is the largest call input p accepts, in bytes.
func (p *Pipeline) InputLimit() int {
	if p.MaxInputBytes > 0 {
		return p.MaxInputBytes
	}
	return DefaultMaxInputBytes
}

func (p *Pipeline) log() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}

// Run runs one call and applies its context modifier.
func (p *Pipeline) Run(ctx context.Context, uc *tools.UseContext, call Call, progress tools.Progress) Outcome {
	out := p.runPipeline(ctx, uc, call, progress, nil)
	applyModifier(uc, out)
	return out
}

func applyModifier(uc *tools.UseContext, out Outcome) {
	if out.Result != nil && out.Result.Modify != nil && uc != nil && uc.Session != nil {
		out.Result.Modify(uc.Session)
	}
}

// IsConcurrencySafe reports whether call may run beside others: its tool
// exists, its arguments are valid, and the tool says so for this input.
func (p *Pipeline) IsConcurrencySafe(call Call) bool {
	return p.decodeCall(call).safe
}

// decoded is a call's input checked against its tool's schema and decoded,
// once: the executor decodes a call to schedule it and hands the result to
// runPipeline, which would otherwise decode it again.
type decoded struct {
	tool *tools.Tool
	in   *tools.Input
	err  error
	// safe is whether the call may run beside others.
	safe bool
}

// decodeCall finds call's tool and decodes its input.
func (p *Pipeline) decodeCall(call Call) *decoded {
	t, ok := p.Pool.Find(call.Name)
	if !ok {
		return &decoded{err: fmt.Errorf("%w: %q", ErrUnknownTool, call.Name)}
	}
	in, err := p.decode(t, call.Name, call.Input)
	return &decoded{tool: t, in: in, err: err, safe: err == nil && in.ConcurrencySafe()}
}

// runPipeline is the one execution path: find → schema validation →
// decoding → the handler's Validate → PreToolUse hooks → permission decision → call with
// progress and cancellation → PostToolUse hooks → rendering → result budget.
// It does not apply the result's context modifier; callers decide when.
//
// pre, if not nil, is the call's input already decoded by decodeCall.
func (p *Pipeline) runPipeline(ctx context.Context, uc *tools.UseContext, call Call, progress tools.Progress, pre *decoded) Outcome {
	out := Outcome{Call: call}
	if uc == nil || uc.Session == nil {
		out.Err = errors.New("tool call without a session")
		return out
	}
	if uc.CallID == "" {
		c := *uc
		c.CallID = call.ID
		uc = &c
	}

	// Find and decode.
	if pre == nil {
		pre = p.decodeCall(call)
	}
	t := pre.tool
	if t == nil {
		out.Err = pre.err
		return out
	}
	out.Tool = t
	fail := func(msg string) Outcome {
		out.Result = &tools.Result{Text: msg, IsError: true}
		var found []string
		p.redactResult(out.Result, &found)
		if len(found) > 0 {
			out.Result.Text += redactedNotice(found)
		}
		return out
	}
	progress = p.redactProgress(progress)

	// Semantic validation of the decoded input.
	raw := call.Input
	if pre.err != nil {
		return fail(pre.err.Error())
	}
	in := pre.in
	vctx, end := p.step(ctx, t.Name, StepValidate)
	err := in.Validate(vctx, uc)
	end(err)
	if err != nil {
		return fail(err.Error())
	}

	// PreToolUse hooks.
	var hookDecision permissions.Decision
	var extraContext []string
	if p.Hooks != nil {
		hctx, end := p.step(ctx, t.Name, StepPreHooks)
		pre, err := p.Hooks.PreToolUse(hctx, HookEvent{Tool: t, Name: t.Name, Input: raw, UC: uc})
		end(err)
		if err != nil {
			p.log().Warn("PreToolUse hook failed", "tool", t.Name, "err", err)
		}
		if pre.Block {
			out.Decision = permissions.Decision{Behavior: permissions.Deny, Reason: pre.Reason}
			return fail(fmt.Sprintf("%s was blocked by a PreToolUse hook: %s", call.Name, pre.Reason))
		}
		if pre.UpdatedInput != nil {
			raw = pre.UpdatedInput
			if in, err = p.prepare(ctx, t, call.Name, raw, uc); err != nil {
				return fail("input rewritten by a PreToolUse hook is invalid: " + err.Error())
			}
		}
		hookDecision = pre.Decision
		if pre.AdditionalContext != "" {
			extraContext = append(extraContext, pre.AdditionalContext)
		}
	}

	res, d, uc, refused := p.decideAndCall(ctx, t, call, in, raw, uc, hookDecision, progress)
	out.Decision = d
	if refused != "" {
		return fail(refused)
	}
	extraContext = append(extraContext, p.postToolUse(ctx, t, raw, uc, res)...)

	// Rendering and budget.
	_, end = p.step(ctx, t.Name, StepRender)
	defer func() { end(nil) }()
	render(t, res)
	if len(extraContext) > 0 {
		res.Extra = append(res.Extra, tools.Content{Kind: tools.TextContent, Text: strings.Join(extraContext, "\n")})
	}
	var found []string
	p.redactResult(res, &found)
	persisted, err := applyBudget(uc.Session, t, call.ID, res)
	if err != nil {
		p.log().Error("result budget", "tool", t.Name, "err", err)
	}
	if len(found) > 0 {
		res.Text += redactedNotice(found)
	}
	out.Persisted = persisted
	out.Result = res
	return out
}

// decideAndCall makes the permission decision and, when it allows, calls
// the tool: both under the session's concurrency gate. The decision
// resolves every path against one current directory, fixed on the call's
// context, and the tool opens exactly what was judged; no call that may
// change the directory or the files (an exclusive one) runs between the
// two. It returns the tool's result, the decision, the context the tool
// ran with, and the refusal's text when the call did not run (refused
// or cancelled while waiting for the gate).
func (p *Pipeline) decideAndCall(ctx context.Context, t *tools.Tool, call Call, in *tools.Input, raw json.RawMessage, uc *tools.UseContext, hookDecision permissions.Decision, progress tools.Progress) (*tools.Result, permissions.Decision, *tools.UseContext, string) {
	gctx, end := p.step(ctx, t.Name, StepWait)
	release, err := sessionGate(uc.Session, p.MaxParallel).acquire(gctx, in.ConcurrencySafe())
	end(err)
	if err != nil {
		return nil, permissions.Decision{}, uc, cancelMessage(ctx, call.Name, err)
	}
	// A call that detaches (see tools.UseContext.Detach) leaves the gate
	// then, so that the calls behind it may run.
	var releaseOnce sync.Once
	leave := func() { releaseOnce.Do(release) }
	defer leave()
	{
		c := *uc
		outer := c.Detach
		c.Detach = func() {
			leave()
			if outer != nil {
				outer()
			}
		}
		uc = &c
	}
	if uc.Cwd == "" {
		c := *uc
		c.Cwd = uc.Session.Cwd()
		uc = &c
	}
	permit := p.Permit
	if permit == nil {
		permit = AllowUnlessDenied
	}
	pctx, end := p.step(ctx, t.Name, StepPermission)
	d := permit.Decide(pctx, PermissionRequest{
		Tool: t, Input: in, Raw: raw, UC: uc,
		HookDecision: hookDecision,
	})
	if d.Behavior != permissions.Allow {
		end(fmt.Errorf("%s: %s", d.Behavior, d.Reason))
		return nil, d, uc, refusal(call.Name, d)
	}
	end(nil)
	if d.Resolved != nil || d.ReadDenied != nil {
		// The tool learns where the checked paths led (see
		// tools.UseContext.Resolved) and which paths it must not read, on
		// its own copy of the context.
		c := *uc
		c.Resolved, c.ReadDenied = d.Resolved, d.ReadDenied
		uc = &c
	}
	cctx, end := p.step(ctx, t.Name, StepCall)
	res, err := callTool(cctx, t, in, uc, progress)
	end(callError(res, err))
	if err != nil {
		res = &tools.Result{Text: err.Error(), IsError: true}
		if ctx.Err() != nil {
			res.Text = cancelMessage(ctx, call.Name, err)
		}
	}
	return res, d, uc, ""
}

// postToolUse runs the PostToolUse hooks on a call's result and returns
// what they add for the model; feedback marks the result an error.
func (p *Pipeline) postToolUse(ctx context.Context, t *tools.Tool, raw json.RawMessage, uc *tools.UseContext, res *tools.Result) []string {
	if p.Hooks == nil {
		return nil
	}
	var extra []string
	hctx, end := p.step(ctx, t.Name, StepPostHooks)
	post, err := p.Hooks.PostToolUse(hctx, HookEvent{Tool: t, Name: t.Name, Input: raw, UC: uc, Result: res})
	end(err)
	if err != nil {
		p.log().Warn("PostToolUse hook failed", "tool", t.Name, "err", err)
	}
	if post.AdditionalContext != "" {
		extra = append(extra, post.AdditionalContext)
	}
	if post.Feedback != "" {
		extra = append(extra, "PostToolUse hook feedback: "+post.Feedback)
		res.IsError = true
	}
	return extra
}

// callError is what a tracer is told of a call's end: its error, or the
// text of an error result.
func callError(res *tools.Result, err error) error {
	if err != nil {
		return err
	}
	if res != nil && res.IsError {
		return errors.New(firstLine(res.Text))
	}
	return nil
}

// firstLine is s up to its first line break, at most 200 bytes.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// prepare validates raw against the tool's schema, decodes it and runs the
// tool's own validation.
func (p *Pipeline) prepare(ctx context.Context, t *tools.Tool, called string, raw json.RawMessage, uc *tools.UseContext) (*tools.Input, error) {
	in, err := p.decode(t, called, raw)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(ctx, uc); err != nil {
		return nil, err
	}
	return in, nil
}

// decode checks raw's size and schema and decodes it into t's input.
func (p *Pipeline) decode(t *tools.Tool, called string, raw json.RawMessage) (*tools.Input, error) {
	if limit := p.InputLimit(); len(raw) > limit {
		return nil, &ValidationError{Tool: called, Problems: []string{fmt.Sprintf(
			"the input is %s, over the largest accepted, %s (--max-input-bytes); nothing was done: send less in one call (a large file can be written in parts: Write the first, then add the rest with Edit)",
			tools.FormatSize(int64(len(raw))), tools.FormatSize(int64(limit)))}}
	}
	v, err := p.Pool.validators[t.Name]()
	if err != nil {
		return nil, err
	}
	if err := v.validate(called, raw); err != nil {
		return nil, err
	}
	return t.Decode(raw)
}

// callTool runs the tool, turning a panic into an error result so one bad
// call cannot take the server down.
func callTool(ctx context.Context, t *tools.Tool, in *tools.Input, uc *tools.UseContext, progress tools.Progress) (res *tools.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("%s failed unexpectedly: %v", t.Name, r)
		}
	}()
	res, err = in.Call(ctx, uc, progress)
	if err == nil && res == nil {
		res = &tools.Result{}
	}
	return res, err
}

func cancelMessage(ctx context.Context, name string, err error) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Sprintf("%s was cancelled: %v", name, cause)
	}
	return fmt.Sprintf("%s was cancelled: %v", name, err)
}

// render fills the empty-result text (docs/tools.md §1).
func render(t *tools.Tool, res *tools.Result) {
	if res.Text == "" && len(res.Extra) == 0 {
		res.Text = fmt.Sprintf("(%s completed with no output)", t.Name)
	}
}

// refusal words a permission refusal for the model.
func refusal(name string, d permissions.Decision) string {
	var b strings.Builder
	switch d.Behavior {
	case permissions.Ask:
		fmt.Fprintf(&b, "Permission to use %s was not granted: the call needs confirmation and none was given.", name)
	default:
		fmt.Fprintf(&b, "Permission to use %s was denied.", name)
	}
	if d.Reason != "" {
		b.WriteString(" " + d.Reason)
	}
	if d.Rule != "" {
		fmt.Fprintf(&b, " (rule: %s)", d.Rule)
	}
	if d.Suggestion != "" {
		fmt.Fprintf(&b, " To allow it, add %q to permissions.allow.", d.Suggestion)
	}
	return b.String()
}

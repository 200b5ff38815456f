package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// DefaultMaxResultSizeChars is the result budget of a tool that sets none.
const DefaultMaxResultSizeChars = 100_000

// Unlimited as a MaxResultSizeChars means the tool bounds its own output
// (Read does) and the orchestrator never persists its result.
const Unlimited = -1

// Tool is one tool: the facts about it that hold for every call, fixed
// when it is built, and the handler that decodes and runs its calls.
//
// Build a built-in with [New], which generates the input schema from the
// input type and binds a typed [Handler]; build a tool whose input stays
// raw JSON (an upstream MCP server's) with [NewRaw]. A Tool not built by
// one of them has no handler: [Tool.Decode] refuses every input. Pass
// tools by pointer and do not change one once it is in a pool.
//
// The fixed facts answer for the tool in general (tools/list annotations,
// which tools a sub-agent is offered) and are the defaults of the per-call
// facts: a call is read-only when the tool is, or when its handler finds
// this input read-only ([Input.ReadOnly]). Every fact's zero value is the
// fail-closed answer: not read-only, destructive unless read-only, not
// idempotent, not concurrency-safe.
type Tool struct {
	// Name is the name the tool is listed and called by.
	Name string
	// Aliases are older names the tool also answers to.
	Aliases []string
	// Description is the model-facing text: what the tool does and how to use it.
	Description string
	// InputSchema is the JSON Schema of the input object (additionalProperties
	// false for built-ins). [New] generates it from the input type.
	InputSchema *jsonschema.Schema
	// InputSchemaJSON, if set, is InputSchema as json.Marshal writes it,
	// known ahead: the built-ins' are generated at build time (package
	// builtin, whose test holds the two together), so that a server
	// answers initialize and tools/list without marshalling schemas.
	// Empty: InputSchema is marshalled where the JSON is needed.
	InputSchemaJSON json.RawMessage
	// MaxResultSizeChars is the largest text result kept inline; larger ones
	// are persisted by the orchestrator. [Unlimited] disables that; 0 is
	// [DefaultMaxResultSizeChars] ([New] and [NewRaw] fill it in).
	MaxResultSizeChars int
	// SearchHint is a few words on what the tool is for, matched by hosts
	// that load tools on demand (Claude Code's ToolSearch reads it from
	// the tool's _meta as anthropic/searchHint). Every built-in has one.
	SearchHint string
	// Core: a coding model uses the tool in nearly every task (Read, Write,
	// Edit, MultiEdit, Glob, Grep, Bash, TaskOutput), so hosts that defer
	// tools are asked to load it up front (anthropic/alwaysLoad).
	Core bool

	// ReadOnly: every call changes nothing.
	ReadOnly bool
	// NonDestructive: the calls that change something never destroy data
	// (they add, or replace state the tool itself keeps: the todo list).
	// Without it a call that is not read-only counts as destructive.
	NonDestructive bool
	// Idempotent: repeating a call with the same input has no further effect.
	Idempotent bool
	// OpenWorld: the tool reaches outside the local machine.
	OpenWorld bool
	// ConcurrencySafe: every call may run beside others.
	ConcurrencySafe bool
	// AbortsSiblingsOnError: a failing call cancels the calls running
	// beside it in a parallel batch.
	AbortsSiblingsOnError bool
	// ActsOnConversation: the tool acts on the conversation itself rather
	// than on files or the world: it asks the user (AskUserQuestion),
	// switches the plan mode (EnterPlanMode, ExitPlanMode) or starts
	// sub-agents (Agent). A sub-agent is never offered it.
	ActsOnConversation bool
	// NeedsModel: the tool's calls run a model (the Agent tool's
	// sub-agents), so it is of use only where one is at hand: the MCP
	// server lists it only to clients that offer sampling.
	NeedsModel bool
	// Upstream is the MCP server the tool forwards its calls to, empty for
	// a built-in. Such a tool needs a rule to run unless the call is
	// read-only.
	Upstream string
	// Disabled leaves the tool out of the pool (WebSearch without a
	// search backend).
	Disabled bool

	handler handler
}

// Destructive reports whether a call of the tool may destroy data, as far
// as the fixed facts tell: it is neither read-only nor [Tool.NonDestructive].
func (t *Tool) Destructive() bool { return !t.ReadOnly && !t.NonDestructive }

// CanBeReadOnly reports whether some call of the tool is read-only: every
// call ([Tool.ReadOnly]), or those its handler finds read-only (Bash's
// `ls`, not its `rm`).
func (t *Tool) CanBeReadOnly() bool {
	return t.ReadOnly || (t.handler != nil && t.handler.readOnlyByInput())
}

// String is the tool's name.
func (t *Tool) String() string { return t.Name }

// Handler is the typed half of a built-in tool whose input type is In:
// every function gets the input [Tool.Decode] made, as *In. Only Call is
// required; [New] gives the others' fail-closed answers when nil.
type Handler[In any] struct {
	// Schema, if set, adjusts the schema generated from In with what
	// struct tags cannot say (bounds, enums, defaults). Descriptions go in
	// the fields' `jsonschema:"..."` tags. It must keep
	// additionalProperties false.
	Schema func(s *jsonschema.Schema)
	// Validate checks what the schema cannot (paths, ranges that depend on
	// each other, state of the session).
	Validate func(ctx context.Context, in *In, uc *UseContext) error
	// ReadOnly reports whether this call changes nothing, for a tool not
	// read-only in general ([Tool.ReadOnly] answers for all calls).
	ReadOnly func(in *In) bool
	// ConcurrencySafe reports whether this call may run beside others, for
	// a tool not concurrency-safe in general.
	ConcurrencySafe func(in *In) bool
	// Call runs the tool. A returned error becomes an error result whose
	// text is the error's message; Call must honour ctx cancellation.
	// progress is never nil.
	Call func(ctx context.Context, in *In, uc *UseContext, progress Progress) (*Result, error)
}

// New builds a built-in tool from its fixed facts t and its typed handler
// h. The input schema is generated from In (adjusted by h.Schema); inputs
// with keys In does not have are refused. New panics if the tool is
// unusable (no name, no Call, or an input type without a schema): those are
// programming errors found by the first test that lists the tools.
func New[In any](t Tool, h Handler[In]) *Tool {
	if t.Name == "" || h.Call == nil {
		panic("tools.New: a tool needs a Name and a Call function")
	}
	schema, err := schemaFor[In]()
	if err != nil {
		panic(fmt.Sprintf("tools.New(%s): %v", t.Name, err))
	}
	if h.Schema != nil {
		h.Schema(schema)
	}
	t.InputSchema = schema
	if t.MaxResultSizeChars == 0 {
		t.MaxResultSizeChars = DefaultMaxResultSizeChars
	}
	t.handler = &typed[In]{name: t.Name, h: h}
	return &t
}

// RawHandler runs a call of a tool made by [NewRaw]: args is the call's
// arguments, a JSON object.
type RawHandler func(ctx context.Context, args json.RawMessage, uc *UseContext, progress Progress) (*Result, error)

// NewRaw builds a tool whose input is kept as raw JSON: an upstream MCP
// server's, checked against t.InputSchema here and further by the server
// itself. Every per-call fact is the fixed one. NewRaw panics without a
// name, schema or handler.
func NewRaw(t Tool, h RawHandler) *Tool {
	if t.Name == "" || t.InputSchema == nil || h == nil {
		panic("tools.NewRaw: a tool needs a Name, an InputSchema and a handler")
	}
	if t.MaxResultSizeChars == 0 {
		t.MaxResultSizeChars = DefaultMaxResultSizeChars
	}
	t.handler = rawTool{name: t.Name, h: h}
	return &t
}

// Decode parses schema-valid arguments into the tool's input, bound to
// the handler that runs it.
func (t *Tool) Decode(raw json.RawMessage) (*Input, error) {
	if t.handler == nil {
		return nil, fmt.Errorf("%s: the tool was not built by tools.New or tools.NewRaw", t.Name)
	}
	b, err := t.handler.decode(raw)
	if err != nil {
		return nil, err
	}
	return &Input{tool: t, bound: b}, nil
}

// Input is one call's input as its tool decoded it ([Tool.Decode]), bound
// to the tool's handler: asking about it or running it needs no check of
// its type. Its [Input.Value] is what [PathInput], [CommandInput] and
// [URLInput] are asked of.
type Input struct {
	tool  *Tool
	bound bound
}

// Value is the decoded input: *In for a tool built by New[In], the
// arguments as json.RawMessage for one built by NewRaw.
func (in *Input) Value() any { return in.bound.value() }

// ReadOnly reports whether this call changes nothing.
func (in *Input) ReadOnly() bool { return in.tool.ReadOnly || in.bound.readOnly() }

// ConcurrencySafe reports whether this call may run beside others.
func (in *Input) ConcurrencySafe() bool {
	return in.tool.ConcurrencySafe || in.bound.concurrencySafe()
}

// Destructive reports whether this call may destroy data: it is not
// read-only and the tool is not [Tool.NonDestructive].
func (in *Input) Destructive() bool { return !in.ReadOnly() && !in.tool.NonDestructive }

// Validate checks what the schema cannot (see [Handler.Validate]).
func (in *Input) Validate(ctx context.Context, uc *UseContext) error {
	return in.bound.validate(ctx, uc)
}

// Call runs the tool on this input; a nil progress reports nowhere.
func (in *Input) Call(ctx context.Context, uc *UseContext, progress Progress) (*Result, error) {
	if progress == nil {
		progress = func(ProgressUpdate) {}
	}
	return in.bound.call(ctx, uc, progress)
}

// handler decodes a tool's inputs; bound is one decoded input.
type handler interface {
	decode(raw json.RawMessage) (bound, error)
	// readOnlyByInput reports whether the handler finds some inputs
	// read-only.
	readOnlyByInput() bool
}

type bound interface {
	value() any
	readOnly() bool
	concurrencySafe() bool
	validate(ctx context.Context, uc *UseContext) error
	call(ctx context.Context, uc *UseContext, progress Progress) (*Result, error)
}

type typed[In any] struct {
	name string
	h    Handler[In]
}

// typedInput is an input of a tool built by New[In].
type typedInput[In any] struct {
	h *Handler[In]
	v *In
}

func (b typedInput[In]) value() any { return b.v }

func (b typedInput[In]) readOnly() bool { return b.h.ReadOnly != nil && b.h.ReadOnly(b.v) }

func (b typedInput[In]) concurrencySafe() bool {
	return b.h.ConcurrencySafe != nil && b.h.ConcurrencySafe(b.v)
}

func (b typedInput[In]) validate(ctx context.Context, uc *UseContext) error {
	if b.h.Validate == nil {
		return nil
	}
	return b.h.Validate(ctx, b.v, uc)
}

func (b typedInput[In]) call(ctx context.Context, uc *UseContext, progress Progress) (*Result, error) {
	return b.h.Call(ctx, b.v, uc, progress)
}

func (t *typed[In]) readOnlyByInput() bool { return t.h.ReadOnly != nil }

func (t *typed[In]) decode(raw json.RawMessage) (bound, error) {
	in := new(In)
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	// Unknown fields are refused; a large argument, a Write's content, is
	// decoded once, not buffered again and again by a json.Decoder (see
	// decodeInput).
	if err := decodeInput(raw, in); err != nil {
		return nil, fmt.Errorf("%s: decoding input: %w", t.name, err)
	}
	return typedInput[In]{h: &t.h, v: in}, nil
}

// rawTool is the handler of a tool made by NewRaw.
type rawTool struct {
	name string
	h    RawHandler
}

// rawInput is an input of a tool made by NewRaw: its arguments.
type rawInput struct {
	args json.RawMessage
	h    RawHandler
}

func (rawTool) readOnlyByInput() bool { return false }

// decode keeps the arguments as they are (the schema check already ran),
// an absent or null object read as {}.
func (r rawTool) decode(args json.RawMessage) (bound, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return nil, fmt.Errorf("%s: arguments are not valid JSON", r.name)
	}
	return rawInput{args: append(json.RawMessage(nil), args...), h: r.h}, nil
}

func (b rawInput) value() any                                  { return b.args }
func (b rawInput) readOnly() bool                              { return false }
func (b rawInput) concurrencySafe() bool                       { return false }
func (b rawInput) validate(context.Context, *UseContext) error { return nil }

func (b rawInput) call(ctx context.Context, uc *UseContext, progress Progress) (*Result, error) {
	return b.h(ctx, b.args, uc, progress)
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// DefaultMaxResultSizeChars is the result budget of a tool whose Spec sets none.
const DefaultMaxResultSizeChars = 100_000

// Unlimited as a MaxResultSizeChars means the tool bounds its own output
// (Read does) and the orchestrator never persists its result.
const Unlimited = -1

// Input is a decoded tool input: a pointer to the tool's input struct.
type Input = any

// Tool is the interface every tool satisfies. Build one with [New].
//
// Methods that take an Input expect the value returned by Decode; passing
// anything else is a programming error and the fail-closed answer is given.
type Tool interface {
	// Name is the name the tool is listed and called by.
	Name() string
	// Aliases are older names the tool also answers to.
	Aliases() []string
	// Description is the model-facing text: what the tool does and how to use it.
	Description() string
	// Schema is the JSON Schema of the input object (additionalProperties false).
	Schema() *jsonschema.Schema
	// IsEnabled reports whether the tool belongs in the pool at all.
	IsEnabled() bool
	// MaxResultSizeChars is the largest text result kept inline; larger ones
	// are persisted by the orchestrator. [Unlimited] disables that.
	MaxResultSizeChars() int
	// OpenWorld reports whether the tool reaches outside the local machine.
	OpenWorld() bool
	// AbortsSiblingsOnError reports whether a failing call of this tool
	// cancels the calls running beside it in a parallel batch.
	AbortsSiblingsOnError() bool

	// Decode parses schema-valid arguments into the tool's input value.
	Decode(raw json.RawMessage) (Input, error)
	// ValidateInput checks what the schema cannot (paths, ranges that
	// depend on each other, state of the session).
	ValidateInput(ctx context.Context, in Input, uc *UseContext) error
	// IsReadOnly reports whether the call changes nothing.
	IsReadOnly(in Input) bool
	// IsConcurrencySafe reports whether the call may run beside others.
	IsConcurrencySafe(in Input) bool
	// IsDestructive reports whether the call may destroy data.
	IsDestructive(in Input) bool
	// IsIdempotent reports whether repeating the call has no further effect.
	IsIdempotent(in Input) bool
	// Call runs the tool. A returned error becomes an error result whose
	// text is the error's message; Call must honour ctx cancellation.
	Call(ctx context.Context, in Input, uc *UseContext, progress Progress) (*Result, error)
}

// Spec describes a tool whose input type is In. Every function field is
// optional; [New] fills fail-closed defaults for the ones left nil.
type Spec[In any] struct {
	Name        string
	Aliases     []string
	Description string
	// Schema, if set, adjusts the schema generated from In (bounds, enums,
	// defaults, descriptions). It must keep additionalProperties false.
	Schema func(s *jsonschema.Schema)
	// MaxResultSizeChars is 0 for [DefaultMaxResultSizeChars].
	MaxResultSizeChars int
	OpenWorld          bool
	// AbortsSiblingsOnError: see [Tool.AbortsSiblingsOnError].
	AbortsSiblingsOnError bool

	Enabled         func() bool
	Validate        func(ctx context.Context, in *In, uc *UseContext) error
	ReadOnly        func(in *In) bool
	ConcurrencySafe func(in *In) bool
	Destructive     func(in *In) bool
	Idempotent      func(in *In) bool
	Run             func(ctx context.Context, in *In, uc *UseContext, progress Progress) (*Result, error)
}

// New builds a Tool from spec. It panics if the spec is unusable (no name,
// no Run, or an input type without a schema): those are programming errors
// found by the first test that lists the tools.
func New[In any](spec Spec[In]) Tool {
	if spec.Name == "" || spec.Run == nil {
		panic("tools.New: a tool needs a Name and a Run function")
	}
	schema, err := SchemaFor[In]()
	if err != nil {
		panic(fmt.Sprintf("tools.New(%s): %v", spec.Name, err))
	}
	if spec.Schema != nil {
		spec.Schema(schema)
	}
	if spec.MaxResultSizeChars == 0 {
		spec.MaxResultSizeChars = DefaultMaxResultSizeChars
	}
	return &typed[In]{spec: spec, schema: schema}
}

type typed[In any] struct {
	spec   Spec[In]
	schema *jsonschema.Schema
}

func (t *typed[In]) Name() string                { return t.spec.Name }
func (t *typed[In]) Aliases() []string           { return t.spec.Aliases }
func (t *typed[In]) Description() string         { return t.spec.Description }
func (t *typed[In]) Schema() *jsonschema.Schema  { return t.schema }
func (t *typed[In]) MaxResultSizeChars() int     { return t.spec.MaxResultSizeChars }
func (t *typed[In]) OpenWorld() bool             { return t.spec.OpenWorld }
func (t *typed[In]) AbortsSiblingsOnError() bool { return t.spec.AbortsSiblingsOnError }
func (t *typed[In]) String() string              { return t.spec.Name }

func (t *typed[In]) IsEnabled() bool {
	return t.spec.Enabled == nil || t.spec.Enabled()
}

func (t *typed[In]) Decode(raw json.RawMessage) (Input, error) {
	in := new(In)
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	// Unknown fields are refused. The check runs on the input with its
	// long strings emptied (its structure is all the check needs), so a
	// large argument, a Write's content, is not buffered again and again
	// by a json.Decoder; the input itself is decoded once.
	dec := json.NewDecoder(bytes.NewReader(withoutLongStrings(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(new(In)); err != nil {
		return nil, fmt.Errorf("%s: decoding input: %w", t.spec.Name, err)
	}
	if err := json.Unmarshal(raw, in); err != nil {
		return nil, fmt.Errorf("%s: decoding input: %w", t.spec.Name, err)
	}
	return in, nil
}

// withoutLongStrings is the JSON text raw with every string longer than
// a few hundred bytes emptied (""), or raw itself when it is small.
// Strings are found by their quotes, skipping escaped characters; the
// structure is kept as it is, so a decoder sees the same fields, types
// and syntax errors.
func withoutLongStrings(raw []byte) []byte {
	const keep = 256
	if len(raw) <= 4096 {
		return raw
	}
	out := make([]byte, 0, 4096)
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out = append(out, raw[i])
			i++
			continue
		}
		end := JSONStringEnd(raw, i)
		if end < 0 { // unterminated: leave it for the decoder to refuse
			return append(out, raw[i:]...)
		}
		if end-i > keep {
			out = append(out, '"', '"')
		} else {
			out = append(out, raw[i:end]...)
		}
		i = end
	}
	return out
}

// input recovers the typed input; ok is false for a foreign value.
func (t *typed[In]) input(in Input) (*In, bool) {
	v, ok := in.(*In)
	return v, ok && v != nil
}

func (t *typed[In]) ValidateInput(ctx context.Context, in Input, uc *UseContext) error {
	v, ok := t.input(in)
	if !ok {
		return fmt.Errorf("%s: input of type %T is not this tool's", t.spec.Name, in)
	}
	if t.spec.Validate == nil {
		return nil
	}
	return t.spec.Validate(ctx, v, uc)
}

// predicate evaluates an optional per-input predicate, answering dflt when
// it is unset and the fail-closed answer for a foreign input.
func (t *typed[In]) predicate(f func(*In) bool, in Input, dflt, closed bool) bool {
	v, ok := t.input(in)
	if !ok {
		return closed
	}
	if f == nil {
		return dflt
	}
	return f(v)
}

func (t *typed[In]) IsReadOnly(in Input) bool {
	return t.predicate(t.spec.ReadOnly, in, false, false)
}

func (t *typed[In]) IsConcurrencySafe(in Input) bool {
	return t.predicate(t.spec.ConcurrencySafe, in, false, false)
}

// IsDestructive defaults to false only for read-only calls: a tool that may
// write is assumed able to destroy unless its Spec says otherwise.
func (t *typed[In]) IsDestructive(in Input) bool {
	if t.spec.Destructive == nil {
		return !t.IsReadOnly(in)
	}
	return t.predicate(t.spec.Destructive, in, true, true)
}

func (t *typed[In]) IsIdempotent(in Input) bool {
	if t.spec.Idempotent == nil {
		return t.IsReadOnly(in)
	}
	return t.predicate(t.spec.Idempotent, in, false, false)
}

func (t *typed[In]) Call(ctx context.Context, in Input, uc *UseContext, progress Progress) (*Result, error) {
	v, ok := t.input(in)
	if !ok {
		return nil, fmt.Errorf("%s: input of type %T is not this tool's", t.spec.Name, in)
	}
	if progress == nil {
		progress = func(ProgressUpdate) {}
	}
	return t.spec.Run(ctx, v, uc, progress)
}

// JSONStringEnd returns the index just past the closing quote of the JSON
// string whose opening quote is raw[i], skipping escaped characters, or -1
// when the string is not terminated. It only finds the string's extent:
// whether its contents are valid is left to the decoder.
func JSONStringEnd(raw []byte, i int) int {
	j := i + 1
	for j < len(raw) && raw[j] != '"' {
		if raw[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(raw) {
		return -1
	}
	return j + 1
}

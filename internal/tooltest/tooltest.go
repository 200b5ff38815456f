package tooltest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// NewSession makes a session closed when the test ends. A zero Cwd is a
// fresh temporary directory (symbolic links resolved, so paths the tools
// report compare equal to it); a zero StateRoot is another.
func NewSession(t testing.TB, opts tools.SessionOptions) *tools.Session {
	t.Helper()
	if opts.Cwd == "" {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		opts.Cwd = dir
	}
	if opts.StateRoot == "" {
		opts.StateRoot = t.TempDir()
	}
	s, err := tools.NewSession(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Options configure [New].
type Options struct {
	// Session configures the session (see [NewSession]).
	Session tools.SessionOptions
	// Permit decides permission; nil means orchestrator.AllowUnlessDenied.
	Permit orchestrator.Permitter
	// Hooks runs PreToolUse/PostToolUse hooks; nil means none.
	Hooks orchestrator.Hooks
	// UseContext is the template of every call's context (Asker, Sampler,
	// SubAgents, Logger); its Session is set to the Env's.
	UseContext tools.UseContext
}

// Env is a pipeline over some tools and a session to call them in.
type Env struct {
	Pipeline *orchestrator.Pipeline
	Session  *tools.Session
	// UseContext is the template of every call's context.
	UseContext tools.UseContext

	t testing.TB
}

// New makes an Env whose pool holds ts.
func New(t testing.TB, ts []*tools.Tool, o Options) *Env {
	t.Helper()
	pool, err := orchestrator.AssemblePool(ts, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Pipeline: &orchestrator.Pipeline{Pool: pool, Permit: o.Permit, Hooks: o.Hooks}, Session: NewSession(t, o.Session), t: t}
	e.UseContext = o.UseContext
	e.UseContext.Session = e.Session
	return e
}

// Dir is the session's current directory.
func (e *Env) Dir() string { return e.Session.Cwd() }

// On is e for the (sub)test t, sharing its pipeline and session: its
// failures are t's. A parallel subtest needs its own, as a test may fail
// only from its own goroutine.
func (e *Env) On(t testing.TB) *Env {
	c := *e
	c.t = t
	return &c
}

// Run runs one call as a client would make it: input is the arguments (a
// string, []byte or json.RawMessage is taken as JSON text, anything else is
// marshalled). The result's session change is applied.
func (e *Env) Run(ctx context.Context, name string, input any, progress tools.Progress) orchestrator.Outcome {
	e.t.Helper()
	uc := e.UseContext
	return e.Pipeline.Run(ctx, &uc, orchestrator.Call{ID: "call-" + name, Name: name, Input: raw(e.t, input)}, progress)
}

// Call runs a call and returns its result; a call that never reached a
// tool (an unknown name) fails the test.
func (e *Env) Call(name string, input any) *tools.Result {
	e.t.Helper()
	out := e.Run(context.Background(), name, input, nil)
	if out.Err != nil {
		e.t.Fatalf("%s: %v", name, out.Err)
	}
	return out.Result
}

// OK runs a call that must succeed.
func (e *Env) OK(name string, input any) *tools.Result {
	e.t.Helper()
	res := e.Call(name, input)
	if res.IsError {
		e.t.Fatalf("%s(%s) failed: %s", name, raw(e.t, input), res.Text)
	}
	return res
}

// Fail runs a call that must fail with a message holding every want, and
// returns the message.
func (e *Env) Fail(name string, input any, want ...string) string {
	e.t.Helper()
	res := e.Call(name, input)
	if !res.IsError {
		e.t.Fatalf("%s(%s) succeeded, want an error; text: %s", name, raw(e.t, input), res.Text)
	}
	for _, w := range want {
		if !strings.Contains(res.Text, w) {
			e.t.Errorf("%s error %q does not mention %q", name, res.Text, w)
		}
	}
	return res.Text
}

// Call runs one call of tool in uc's session through a pipeline whose pool
// holds tool alone, with orchestrator.AllowUnlessDenied, and returns the
// result (a call that never reached the tool fails the test). The result's
// session change is applied.
func Call(ctx context.Context, t testing.TB, tool *tools.Tool, uc *tools.UseContext, input any, progress tools.Progress) *tools.Result {
	t.Helper()
	return CallWith(ctx, t, nil, tool, uc, input, progress)
}

// CallWith is [Call] with another permission decision.
func CallWith(ctx context.Context, t testing.TB, p orchestrator.Permitter, tool *tools.Tool, uc *tools.UseContext, input any, progress tools.Progress) *tools.Result {
	t.Helper()
	return RunWith(ctx, t, p, tool, uc, input, progress).Result
}

// RunWith is [CallWith] returning the whole outcome: the permission
// decision, and where an over-budget result was saved.
func RunWith(ctx context.Context, t testing.TB, p orchestrator.Permitter, tool *tools.Tool, uc *tools.UseContext, input any, progress tools.Progress) orchestrator.Outcome {
	t.Helper()
	pool, err := orchestrator.AssemblePool([]*tools.Tool{tool}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := &orchestrator.Pipeline{Pool: pool, Permit: p}
	c := *uc
	out := pl.Run(ctx, &c, orchestrator.Call{ID: "call-" + tool.Name, Name: tool.Name, Input: raw(t, input)}, progress)
	if out.Err != nil {
		t.Fatalf("%s: %v", tool.Name, out.Err)
	}
	return out
}

func raw(t testing.TB, input any) json.RawMessage {
	t.Helper()
	switch v := input.(type) {
	case json.RawMessage:
		return v
	case []byte:
		return v
	case string:
		return json.RawMessage(v)
	}
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatalf("marshalling the input: %v", err)
	}
	return b
}

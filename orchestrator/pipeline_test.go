package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

func TestPipelineSteps(t *testing.T) {
	t.Parallel()
	empty := testTool("Quiet", true, nil)
	panicky := testTool("Panicky", false, nil, func(s *testSpec) {
		s.Call = func(context.Context, *testInput, *tools.UseContext, tools.Progress) (*tools.Result, error) {
			panic("boom")
		}
	})
	picky := testTool("Picky", false, nil, func(s *testSpec) {
		s.Validate = func(_ context.Context, in *testInput, _ *tools.UseContext) error {
			if in.ID == "" {
				return errors.New("id must not be empty")
			}
			return nil
		}
	})
	p := newTestPipeline(t, empty, panicky, picky)
	cases := []struct {
		name    string
		call    Call
		wantErr error
		isError bool
		text    string
	}{
		{"unknown tool is a protocol error", Call{Name: "Nope"}, ErrUnknownTool, false, ""},
		{"empty result is rendered", call("1", "Quiet", testInput{}), nil, false, "(Quiet completed with no output)"},
		{"schema violation names the field", Call{Name: "Quiet", Input: json.RawMessage(`{"size":"big"}`)}, nil, true,
			`Invalid input for Quiet: parameter "size" must be an integer, got a string`},
		{"semantic validation", call("2", "Picky", testInput{}), nil, true, "id must not be empty"},
		{"a panic becomes an error result", call("3", "Panicky", testInput{}), nil, true, "Panicky failed unexpectedly: boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, c.call, nil)
			if c.wantErr != nil {
				if !errors.Is(out.Err, c.wantErr) {
					t.Fatalf("Err = %v, want %v", out.Err, c.wantErr)
				}
				return
			}
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if out.Result.IsError != c.isError || out.Result.Text != c.text {
				t.Errorf("result = (%v, %q), want (%v, %q)", out.Result.IsError, out.Result.Text, c.isError, c.text)
			}
		})
	}
}

func TestPipelinePermitterDecides(t *testing.T) {
	t.Parallel()
	ran := make(chan string, 1)
	tool := testTool("T", false, ran)
	pool, err := AssemblePool([]*tools.Tool{tool}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		decision permissions.Decision
		wantRun  bool
		wantText string
	}{
		{"allow runs the call", permissions.Decision{Behavior: permissions.Allow}, true, ""},
		{"deny names the rule", permissions.Decision{Behavior: permissions.Deny, Rule: "T(x)"}, false,
			"Permission to use T was denied. (rule: T(x))"},
		{"an unanswered ask is refused with the rule that would allow it",
			permissions.Decision{Behavior: permissions.Ask, Reason: "outside the working directories.", Suggestion: "T"}, false,
			`Permission to use T was not granted: the call needs confirmation and none was given. outside the working directories. To allow it, add "T" to permissions.allow.`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &Pipeline{Pool: pool, Permit: PermitterFunc(func(context.Context, PermissionRequest) permissions.Decision { return c.decision })}
			out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, call("1", "T", testInput{ID: "x"}), nil)
			select {
			case <-ran:
				if !c.wantRun {
					t.Fatal("the call ran")
				}
			default:
				if c.wantRun {
					t.Fatal("the call did not run")
				}
				if out.Result.Text != c.wantText || !out.Result.IsError {
					t.Errorf("text = %q, want %q", out.Result.Text, c.wantText)
				}
			}
		})
	}
}

// scriptedHooks is a Hooks whose outcomes are fixed.
type scriptedHooks struct {
	pre   PreOutcome
	post  PostOutcome
	seen  []string
	input json.RawMessage
}

func (h *scriptedHooks) PreToolUse(_ context.Context, ev HookEvent) (PreOutcome, error) {
	h.seen = append(h.seen, "pre "+ev.Name)
	h.input = ev.Input
	return h.pre, nil
}

func (h *scriptedHooks) PostToolUse(_ context.Context, ev HookEvent) (PostOutcome, error) {
	h.seen = append(h.seen, "post "+ev.Name)
	return h.post, nil
}

func TestPipelineHooks(t *testing.T) {
	t.Parallel()
	tool := testTool("T", false, nil)
	t.Run("pre hook blocks with its reason", func(t *testing.T) {
		h := &scriptedHooks{pre: PreOutcome{Block: true, Reason: "not in prod"}}
		p := newTestPipeline(t, tool)
		p.Hooks = h
		out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, call("1", "T", testInput{}), nil)
		if !out.Result.IsError || !strings.Contains(out.Result.Text, "not in prod") {
			t.Errorf("result = %+v", out.Result)
		}
		if !slices.Equal(h.seen, []string{"pre T"}) {
			t.Errorf("hooks seen = %v", h.seen)
		}
	})
	t.Run("updated input is validated and used", func(t *testing.T) {
		h := &scriptedHooks{pre: PreOutcome{UpdatedInput: json.RawMessage(`{"size":3}`), AdditionalContext: "from pre"},
			post: PostOutcome{AdditionalContext: "from post"}}
		p := newTestPipeline(t, tool)
		p.Hooks = h
		out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, call("1", "T", testInput{Size: 1}), nil)
		if out.Result.IsError || out.Result.Text != "xxx" {
			t.Fatalf("result = %+v", out.Result)
		}
		if len(out.Result.Extra) != 1 || out.Result.Extra[0].Text != "from pre\nfrom post" {
			t.Errorf("extra = %+v", out.Result.Extra)
		}
	})
	t.Run("invalid updated input is refused", func(t *testing.T) {
		h := &scriptedHooks{pre: PreOutcome{UpdatedInput: json.RawMessage(`{"nope":1}`)}}
		p := newTestPipeline(t, tool)
		p.Hooks = h
		out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, call("1", "T", testInput{}), nil)
		if !out.Result.IsError || !strings.Contains(out.Result.Text, `unknown parameter "nope"`) {
			t.Errorf("result = %+v", out.Result)
		}
	})
	t.Run("a hook's deny holds even without rules", func(t *testing.T) {
		h := &scriptedHooks{pre: PreOutcome{Decision: permissions.Decision{Behavior: permissions.Deny, Reason: "hook says no"}}}
		p := newTestPipeline(t, tool)
		p.Hooks = h
		out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, call("1", "T", testInput{}), nil)
		if !out.Result.IsError || !strings.Contains(out.Result.Text, "hook says no") {
			t.Errorf("result = %+v", out.Result)
		}
	})
	t.Run("post hook feedback marks the result", func(t *testing.T) {
		h := &scriptedHooks{post: PostOutcome{Feedback: "lint failed"}}
		p := newTestPipeline(t, tool)
		p.Hooks = h
		out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, call("1", "T", testInput{Size: 1}), nil)
		if !out.Result.IsError || !strings.Contains(out.Result.Extra[0].Text, "lint failed") {
			t.Errorf("result = %+v", out.Result)
		}
	})
}

func TestPipelineCancellation(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	p := newTestPipeline(t, testTool("Slow", false, started))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome)
	go func() {
		done <- p.Run(ctx, &tools.UseContext{Session: newTestSession(t)}, call("1", "Slow", testInput{ID: "s", Block: true}), nil)
	}()
	waitFor(t, started, 1)
	cancel()
	out := <-done
	if !out.Result.IsError || !strings.Contains(out.Result.Text, "Slow was cancelled") {
		t.Errorf("result = %+v", out.Result)
	}
}

func TestGateExclusiveCallWaitsForSafeOnes(t *testing.T) {
	t.Parallel()
	s := newTestSession(t)
	g := sessionGate(s, 2)
	ctx := context.Background()
	r1, _ := g.acquire(ctx, true)
	r2, _ := g.acquire(ctx, true)
	got := make(chan struct{})
	go func() {
		r, err := g.acquire(ctx, false)
		if err == nil {
			r()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("exclusive call ran beside safe ones")
	default:
	}
	r1()
	r2()
	<-got
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	rel, _ := g.acquire(ctx, false)
	if _, err := g.acquire(cctx, true); err == nil {
		t.Error("a cancelled wait acquired the gate")
	}
	rel()
}

// TestPipelineInputCap refuses a call whose input is over MaxInputBytes
// before anything runs, naming the sizes and the flag; an input at the
// cap runs.
func TestPipelineInputCap(t *testing.T) {
	p := newTestPipeline(t, testTool("Echo", false, nil))
	at := call("1", "Echo", testInput{ID: strings.Repeat("a", 2000)})
	p.MaxInputBytes = len(at.Input)
	s := newTestSession(t)
	if out := p.Run(context.Background(), &tools.UseContext{Session: s}, at, nil); out.Err != nil || out.Result.IsError {
		t.Fatalf("an input at the cap: %v %+v", out.Err, out.Result)
	}
	over := call("2", "Echo", testInput{ID: strings.Repeat("a", 2001)})
	out := p.Run(context.Background(), &tools.UseContext{Session: s}, over, nil)
	want := fmt.Sprintf("Invalid input for Echo: the input is %s, over the largest accepted, %s (--max-input-bytes)",
		tools.FormatSize(int64(len(over.Input))), tools.FormatSize(int64(len(at.Input))))
	if out.Err != nil || !out.Result.IsError || !strings.HasPrefix(out.Result.Text, want) {
		t.Fatalf("an input over the cap: %v %+v, want an error starting %q", out.Err, out.Result, want)
	}
	if got := sessionLog(s).all(); len(got) != 3 { // start, end and modify of the first call
		t.Errorf("the tool logged %d events; the call over the cap must not run", len(got))
	}
	if p.IsConcurrencySafe(over) {
		t.Error("a call over the cap counted as concurrency-safe")
	}
}

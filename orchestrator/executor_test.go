package orchestrator

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/tools"
)

func TestExecutorBatches(t *testing.T) {
	t.Parallel()
	p := newTestPipeline(t, testTool("Safe", true, nil), testTool("Serial", false, nil))
	calls := []Call{
		call("1", "Safe", testInput{}), call("2", "Safe", testInput{}),
		call("3", "Serial", testInput{}),
		call("4", "Safe", testInput{}),
		{ID: "5", Name: "Safe", Input: []byte(`{"bogus":1}`)}, // invalid: runs alone
		{ID: "6", Name: "Unknown"},
		call("7", "Safe", testInput{}), call("8", "Safe", testInput{}), call("9", "Safe", testInput{}),
	}
	// A cancelled context: the calls are grouped but none runs.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := p.NewExecutor(ctx, &tools.UseContext{Session: newTestSession(t)}, CallEvents{})
	for _, c := range calls {
		e.Add(c)
	}
	outs := e.Wait()
	type group struct {
		parallel bool
		ids      string
	}
	var got []group
	for _, b := range e.batches {
		var ids []string
		for _, m := range b.members {
			ids = append(ids, m.call.ID)
		}
		got = append(got, group{b.parallel, strings.Join(ids, ",")})
	}
	want := []group{{true, "1,2"}, {false, "3"}, {true, "4"}, {false, "5"}, {false, "6"}, {true, "7,8,9"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batches = %+v, want %+v", got, want)
	}
	for i, o := range outs {
		if o.Call.ID != calls[i].ID || o.Result == nil || !strings.Contains(o.Result.Text, "was not run: the turn was interrupted") {
			t.Errorf("outcome %d = %+v, want a not-run result for %s", i, o.Result, calls[i].ID)
		}
	}
}

// TestExecutorBoundsParallelCalls: a batch of more safe calls than
// MaxParallel never has more than MaxParallel running.
func TestExecutorBoundsParallelCalls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	running, peak := 0, 0
	started := make(chan string, 10)
	release := make(chan struct{})
	counted := func(s *testSpec) {
		run := s.Call
		s.Call = func(ctx context.Context, in *testInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
			mu.Lock()
			running++
			peak = max(peak, running)
			mu.Unlock()
			started <- in.ID
			<-release
			mu.Lock()
			running--
			mu.Unlock()
			return run(ctx, in, uc, p)
		}
	}
	p := newTestPipeline(t, testTool("Safe", true, nil, counted))
	p.MaxParallel = 2
	var calls []Call
	for i := range 5 {
		calls = append(calls, call(fmt.Sprint(i), "Safe", testInput{ID: fmt.Sprint(i)}))
	}
	done := make(chan []Outcome)
	go func() {
		done <- p.RunCalls(context.Background(), &tools.UseContext{Session: newTestSession(t)}, calls, CallEvents{})
	}()
	waitFor(t, started, 2) // two running at once
	for i := range 5 {
		release <- struct{}{} // one ends, the next may start
		if i < 3 {
			waitFor(t, started, 1)
		}
	}
	outs := <-done
	for i, o := range outs {
		if o.Call.ID != calls[i].ID || o.Result.IsError {
			t.Errorf("outcome %d = %+v", i, o)
		}
	}
	if peak != 2 {
		t.Errorf("at most %d calls ran at once, want 2 (MaxParallel)", peak)
	}
}

func TestRunCallsOverlapsSafeCallsAndKeepsOrder(t *testing.T) {
	t.Parallel()
	started := make(chan string, 10)
	barrier := make(chan struct{})
	gated := func(s *testSpec) {
		run := s.Call
		s.Call = func(ctx context.Context, in *testInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
			started <- in.ID
			<-barrier // released only once all three have started: proves overlap
			return run(ctx, in, uc, p)
		}
	}
	p := newTestPipeline(t, testTool("Safe", true, nil, gated), testTool("Serial", false, nil))
	s := newTestSession(t)
	calls := []Call{
		call("a", "Safe", testInput{ID: "a"}), call("b", "Safe", testInput{ID: "b"}), call("c", "Safe", testInput{ID: "c"}),
		call("d", "Serial", testInput{ID: "d"}),
	}
	done := make(chan []Outcome)
	go func() { done <- p.RunCalls(context.Background(), &tools.UseContext{Session: s}, calls, CallEvents{}) }()
	waitFor(t, started, 3)
	close(barrier)
	outs := <-done
	for i, o := range outs {
		if o.Call.ID != calls[i].ID || o.Result == nil || o.Result.IsError {
			t.Fatalf("outcome %d = %+v", i, o)
		}
	}
	ev := sessionLog(s).all()
	// The batch's modifiers apply in call order after all three ended, and
	// before the serial call starts; the serial call's modifier follows it.
	tail := ev[len(ev)-6:]
	want := []string{"modify a", "modify b", "modify c", "start d", "end d", "modify d"}
	if !slices.Equal(tail, want) {
		t.Errorf("events end with %v, want %v (all: %v)", tail, want, ev)
	}
	for _, e := range ev[:6] {
		if strings.HasPrefix(e, "modify") {
			t.Errorf("a modifier applied before the parallel batch finished: %v", ev)
		}
	}
}

func TestRunCallsSerialModifierAppliesBeforeNextCall(t *testing.T) {
	t.Parallel()
	p := newTestPipeline(t, testTool("Serial", false, nil))
	s := newTestSession(t)
	p.RunCalls(context.Background(), &tools.UseContext{Session: s},
		[]Call{call("1", "Serial", testInput{ID: "1"}), call("2", "Serial", testInput{ID: "2"})}, CallEvents{})
	want := []string{"start 1", "end 1", "modify 1", "start 2", "end 2", "modify 2"}
	if got := sessionLog(s).all(); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
}

func TestRunCallsSiblingAbort(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		aborts    bool
		wantAbort bool
	}{
		{"failing Bash-like call cancels siblings", true, true},
		{"other tools' failures do not", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			started := make(chan string, 10)
			blockerRunning := make(chan struct{})
			blocker := testTool("Blocker", true, nil, func(s *testSpec) {
				run := s.Call
				s.Call = func(ctx context.Context, in *testInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
					started <- in.ID
					close(blockerRunning)
					return run(ctx, in, uc, p)
				}
			})
			// The failing call fails only once its sibling is running.
			failing := testTool("Shell", true, nil, func(s *testSpec) {
				s.AbortsSiblingsOnError = c.aborts
				run := s.Call
				s.Call = func(ctx context.Context, in *testInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
					<-blockerRunning
					return run(ctx, in, uc, p)
				}
			})
			p := newTestPipeline(t, failing, blocker)
			s := newTestSession(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan []Outcome)
			go func() {
				done <- p.RunCalls(ctx, &tools.UseContext{Session: s}, []Call{
					call("b1", "Blocker", testInput{ID: "b1", Block: true}),
					call("f", "Shell", testInput{ID: "f", Fail: true}),
				}, CallEvents{})
			}()
			waitFor(t, started, 1)
			if !c.wantAbort {
				// Nothing else will end the blocker: the test cancels it,
				// after checking the failure alone did not.
				for !slices.Contains(sessionLog(s).all(), "fail f") {
					time.Sleep(time.Millisecond)
					select {
					case outs := <-done:
						t.Fatalf("batch ended early: %+v", outs)
					default:
					}
				}
				if slices.Contains(sessionLog(s).all(), "cancelled b1") {
					t.Fatal("sibling was cancelled by a tool that does not abort siblings")
				}
				cancel()
			}
			outs := <-done
			if !outs[1].Result.IsError {
				t.Fatalf("failing call succeeded: %+v", outs[1].Result)
			}
			b := outs[0].Result
			if !b.IsError {
				t.Fatalf("blocked sibling did not end in error: %+v", b)
			}
			mentionsSibling := strings.Contains(b.Text, "a call running beside it failed")
			if mentionsSibling != c.wantAbort {
				t.Errorf("sibling result %q: mentions sibling failure = %v, want %v", b.Text, mentionsSibling, c.wantAbort)
			}
		})
	}
}

func TestExecutorDecodesEachInputOnce(t *testing.T) {
	t.Parallel()
	// Each decoding makes a new *testInput: a call decoded once is seen as
	// one value by the scheduler, the gate and the tool.
	var mu sync.Mutex
	seen := map[string]map[*testInput]bool{}
	see := func(in *testInput) {
		mu.Lock()
		defer mu.Unlock()
		if seen[in.ID] == nil {
			seen[in.ID] = map[*testInput]bool{}
		}
		seen[in.ID][in] = true
	}
	tool := testTool("Counted", false, nil, func(s *testSpec) {
		s.Handler.ConcurrencySafe = func(in *testInput) bool { see(in); return true }
		run := s.Call
		s.Call = func(ctx context.Context, in *testInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
			see(in)
			return run(ctx, in, uc, p)
		}
	})
	p := newTestPipeline(t, tool)
	outs := p.RunCalls(context.Background(), &tools.UseContext{Session: newTestSession(t)},
		[]Call{call("1", "Counted", testInput{ID: "a"}), call("2", "Counted", testInput{ID: "b"})}, CallEvents{})
	for _, o := range outs {
		if o.Err != nil || o.Result.IsError {
			t.Fatalf("call %s: %v %+v", o.Call.ID, o.Err, o.Result)
		}
	}
	for _, id := range []string{"a", "b"} {
		if n := len(seen[id]); n != 1 {
			t.Errorf("call %s: its input was decoded into %d values, want 1", id, n)
		}
	}
}

// TestExecutorDetachedCallLetsTheNextStart: a serial call that detaches
// (an upstream MCP task) leaves its turn and the session's gate to the
// calls behind it, runs on under its own context (a later batch's end
// does not cancel it), and the turn still waits for its result.
func TestExecutorDetachedCallLetsTheNextStart(t *testing.T) {
	t.Parallel()
	started := make(chan string, 10)
	finish := make(chan struct{})
	detaching := func(s *testSpec) {
		s.Call = func(ctx context.Context, in *testInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
			started <- in.ID
			if uc.Detach == nil {
				return nil, fmt.Errorf("%s: no Detach in its use context", in.ID)
			}
			uc.Detach()
			uc.Detach() // a second time does nothing
			select {
			case <-finish:
			case <-ctx.Done():
				return nil, fmt.Errorf("%s was cancelled: %w", in.ID, context.Cause(ctx))
			}
			return &tools.Result{Text: "long " + in.ID}, nil
		}
	}
	p := newTestPipeline(t, testTool("Long", false, nil, detaching), testTool("Serial", false, started), testTool("Safe", true, started))
	s := newTestSession(t)
	calls := []Call{
		call("long", "Long", testInput{ID: "long"}),
		call("next", "Serial", testInput{ID: "next"}),
		call("safe", "Safe", testInput{ID: "safe"}),
	}
	done := make(chan []Outcome)
	go func() { done <- p.RunCalls(context.Background(), &tools.UseContext{Session: s}, calls, CallEvents{}) }()
	waitFor(t, started, 3) // long, then next and safe while long runs on
	select {
	case outs := <-done:
		t.Fatalf("the turn ended before the detached call: %+v", outs)
	default:
	}
	close(finish)
	outs := <-done
	if outs[0].Result == nil || outs[0].Result.Text != "long long" {
		t.Errorf("the detached call's outcome = %+v", outs[0].Result)
	}
	for _, o := range outs[1:] {
		if o.Result == nil || o.Result.IsError {
			t.Errorf("%s: %+v", o.Call.ID, o.Result)
		}
	}
}

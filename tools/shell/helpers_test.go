package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// testOpts are the options the tests use: a short kill grace so a test
// that needs SIGKILL does not wait long.
var testOpts = Options{KillGrace: 500 * time.Millisecond}

// newSession makes a session working in a fresh directory, closed when
// the test ends.
func newSession(t *testing.T) *tools.Session {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := tools.NewSession(tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call runs tool the way the orchestrator does (decode, validate, call)
// and applies the result's session change. A non-nil error is what the
// orchestrator would turn into an error result.
func call(t *testing.T, ctx context.Context, tool tools.Tool, s *tools.Session, args map[string]any, progress tools.Progress) (*tools.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	in, err := tool.Decode(raw)
	if err != nil {
		return nil, err
	}
	uc := &tools.UseContext{Session: s, CallID: "test"}
	if err := tool.ValidateInput(ctx, in, uc); err != nil {
		return nil, err
	}
	res, err := tool.Call(ctx, in, uc, progress)
	if err == nil && res.Modify != nil {
		res.Modify(s)
	}
	return res, err
}

// mustCall is call that fails the test on an error.
func mustCall(t *testing.T, tool tools.Tool, s *tools.Session, args map[string]any) *tools.Result {
	t.Helper()
	res, err := call(t, context.Background(), tool, s, args, nil)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool.Name(), args, err)
	}
	return res
}

// bashOut returns a Bash result's structured output.
func bashOut(t *testing.T, res *tools.Result) *BashOutput {
	t.Helper()
	switch o := res.Output.(type) {
	case *BashOutput:
		return o
	case BashOutput:
		return &o
	}
	t.Fatalf("Bash output is %T", res.Output)
	return nil
}

// taskOut returns a TaskOutput result's structured output.
func taskOut(t *testing.T, res *tools.Result) TaskOutputOutput {
	t.Helper()
	o, ok := res.Output.(TaskOutputOutput)
	if !ok {
		t.Fatalf("TaskOutput output is %T", res.Output)
	}
	return o
}

// pipelineFor builds the orchestrator pipeline over the three shell tools,
// for tests of what the pipeline adds (aliases, budget).
func pipelineFor(t *testing.T, opts Options) *orchestrator.Pipeline {
	t.Helper()
	pool, err := orchestrator.AssemblePool([]tools.Tool{Bash(opts), TaskOutput(), TaskStop()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &orchestrator.Pipeline{Pool: pool}
}

// marker returns a unique sleep duration to find a test's processes by:
// "sleep 300.<random>" appears in no other process's command line.
func marker() string {
	return fmt.Sprintf("300.%d", rand.Int64N(1e12))
}

// waitProcs waits until exactly want processes carry arg.
func waitProcs(t *testing.T, arg string, want int) {
	t.Helper()
	testbin.WaitProcs(t, arg, want, 20*time.Second)
}

// waitFor polls cond until it holds, failing the test after a generous
// bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

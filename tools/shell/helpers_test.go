package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/internal/tooltest"
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
	return tooltest.NewSession(t, tools.SessionOptions{})
}

// call runs tool through the pipeline as a client's call would run (schema
// validation, permission decision, call, result budget) and applies the
// result's session change. A refused or failed call is an error result.
func call(t *testing.T, ctx context.Context, tool *tools.Tool, s *tools.Session, args map[string]any, progress tools.Progress) *tools.Result {
	t.Helper()
	return tooltest.Call(ctx, t, tool, &tools.UseContext{Session: s}, args, progress)
}

// mustCall is call with no progress and no deadline; the result may be an
// error result (a command's non-zero exit), which the test checks.
func mustCall(t *testing.T, tool *tools.Tool, s *tools.Session, args map[string]any) *tools.Result {
	t.Helper()
	return call(t, context.Background(), tool, s, args, nil)
}

// failure is the text of an error result, or "" for a success.
func failure(res *tools.Result) string {
	if !res.IsError {
		return ""
	}
	return res.Text
}

// bashOut returns a Bash result's structured output.
func bashOut(t *testing.T, res *tools.Result) *BashOutput {
	t.Helper()
	switch o := res.Output.(type) {
	case *BashOutput:
		return o
	case BashOutput:
		return &o
	case map[string]any:
		// A persisted result's output: the tool's fields and where the
		// whole output was saved.
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var out BashOutput
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("Bash output %s: %v", b, err)
		}
		return &out
	}
	t.Fatalf("Bash output is %T", res.Output)
	return nil
}

// persistedPath is where the pipeline saved a result over its budget, as
// its output object says.
func persistedPath(t *testing.T, res *tools.Result) string {
	t.Helper()
	if m, ok := res.Output.(map[string]any); ok {
		if p, ok := m["persistedOutputPath"].(string); ok {
			return p
		}
	}
	t.Fatalf("the result was not persisted: output %T, text %.200q", res.Output, res.Text)
	return ""
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
	pool, err := orchestrator.AssemblePool([]*tools.Tool{Bash(opts), TaskOutput(), TaskStop()}, nil, nil)
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

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

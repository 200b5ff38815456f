package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/tools"
)

// testInput is the input of every test tool.
type testInput struct {
	ID    string `json:"id,omitempty"`
	Size  int    `json:"size,omitempty"`
	Fail  bool   `json:"fail,omitempty"`
	Block bool   `json:"block,omitempty"`
}

// eventLog records what test tools did, in order.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

type logKey struct{}

func sessionLog(s *tools.Session) *eventLog {
	return s.Slot(logKey{}, func() any { return &eventLog{} }).(*eventLog)
}

// testTool builds a tool named name. safe makes it concurrency-safe; started
// (if non-nil) is signalled when a call starts; a call with Block waits
// for its context to end.
func testTool(name string, safe bool, started chan<- string, opts ...func(*testSpec)) *tools.Tool {
	spec := testSpec{Tool: tools.Tool{Name: name, ConcurrencySafe: safe, ReadOnly: safe}}
	spec.Handler = tools.Handler[testInput]{
		Call: func(ctx context.Context, in *testInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			log := sessionLog(uc.Session)
			log.add("start " + in.ID)
			if started != nil {
				started <- in.ID
			}
			if in.Block {
				<-ctx.Done()
				log.add("cancelled " + in.ID)
				return nil, ctx.Err()
			}
			if in.Fail {
				log.add("fail " + in.ID)
				return nil, errors.New("failed on purpose: " + in.ID)
			}
			log.add("end " + in.ID)
			id := in.ID
			return &tools.Result{
				Text:   strings.Repeat("x", in.Size),
				Modify: func(s *tools.Session) { sessionLog(s).add("modify " + id) },
			}, nil
		},
	}
	for _, o := range opts {
		o(&spec)
	}
	return tools.New(spec.Tool, spec.Handler)
}

// testSpec is a test tool's fixed facts and handler, for testTool's
// options to adjust.
type testSpec struct {
	tools.Tool
	tools.Handler[testInput]
}

func newTestSession(t *testing.T) *tools.Session {
	t.Helper()
	s, err := tools.NewSession(tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newTestPipeline(t *testing.T, ts ...*tools.Tool) *Pipeline {
	t.Helper()
	pool, err := AssemblePool(ts, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Pipeline{Pool: pool}
}

func call(id, name string, in testInput) Call {
	b, _ := json.Marshal(in)
	return Call{ID: id, Name: name, Input: b}
}

// waitFor receives n values from ch, failing the test if it ends (or
// nears the test binary's deadline) first: a deadlock guard, not a speed
// requirement.
func waitFor(t *testing.T, ch <-chan string, n int) {
	t.Helper()
	ctx, cancel := testbin.WaitContext(t)
	defer cancel()
	for i := 0; i < n; i++ {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("only %d of %d calls started: %v", i, n, context.Cause(ctx))
		}
	}
}

package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

func newSession(t *testing.T, mode permissions.Mode) *tools.Session {
	t.Helper()
	s, err := tools.NewSession(tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir(), Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call decodes, validates and runs a tool call, then applies the result's
// context modifier as the pipeline does.
func call(t *testing.T, tool tools.Tool, uc *tools.UseContext, args any) (*tools.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	in, err := tool.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.ValidateInput(context.Background(), in, uc); err != nil {
		return nil, err
	}
	res, err := tool.Call(context.Background(), in, uc, nil)
	if err == nil && res.Modify != nil {
		res.Modify(uc.Session)
	}
	return res, err
}

// fakeAsker answers every question with a fixed answer and records what
// it was asked.
type fakeAsker struct {
	answer   tools.Answer
	err      error
	messages []string
	schemas  []map[string]any
}

func (a *fakeAsker) Ask(_ context.Context, message string, schema map[string]any) (tools.Answer, error) {
	a.messages = append(a.messages, message)
	a.schemas = append(a.schemas, schema)
	return a.answer, a.err
}

var errAskFailed = errors.New("transport closed")

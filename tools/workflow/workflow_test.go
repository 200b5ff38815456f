package workflow

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

func newSession(t *testing.T, mode permissions.Mode) *tools.Session {
	t.Helper()
	return tooltest.NewSession(t, tools.SessionOptions{Mode: mode})
}

// call runs a tool call through the pipeline, as a client's call runs, and
// applies the result's session change; an error result comes back as the
// error.
func call(t *testing.T, tool *tools.Tool, uc *tools.UseContext, args any) (*tools.Result, error) {
	t.Helper()
	res := tooltest.Call(context.Background(), t, tool, uc, args, nil)
	if res.IsError {
		return nil, errors.New(res.Text)
	}
	return res, nil
}

// resultText is a call's text, whether it succeeded or not.
func resultText(res *tools.Result, err error) string {
	if err != nil {
		return err.Error()
	}
	return res.Text
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

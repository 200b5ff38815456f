package tooltest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

type echoInput struct {
	Text string `json:"text"`
}

func echo() *tools.Tool {
	return tools.New(tools.Tool{
		Name: "Echo",
	}, tools.Handler[echoInput]{
		Call: func(_ context.Context, in *echoInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			if in.Text == "fail" {
				return nil, errors.New("failed on purpose")
			}
			return &tools.Result{Text: in.Text + " in " + uc.Session.Cwd()}, nil
		},
	})
}

// The calls go through the pipeline: schema validation, the permission
// step and rendering happen as they do for a client.
func TestEnv(t *testing.T) {
	t.Parallel()
	e := tooltest.New(t, []*tools.Tool{echo()}, tooltest.Options{})
	if got, want := e.OK("Echo", map[string]any{"text": "hi"}).Text, "hi in "+e.Dir(); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	e.Fail("Echo", `{"text":"hi","loud":true}`, `unknown parameter "loud"`)
	e.Fail("Echo", `{}`, `"text"`)
	e.Fail("Echo", map[string]any{"text": "fail"}, "failed on purpose")

	deny := orchestrator.PermitterFunc(func(context.Context, orchestrator.PermissionRequest) permissions.Decision {
		return permissions.Decision{Behavior: permissions.Deny, Reason: "not today"}
	})
	d := tooltest.New(t, []*tools.Tool{echo()}, tooltest.Options{Permit: deny})
	d.Fail("Echo", map[string]any{"text": "hi"}, "Permission to use Echo was denied. not today")
}

func TestCall(t *testing.T) {
	t.Parallel()
	s := tooltest.NewSession(t, tools.SessionOptions{})
	uc := &tools.UseContext{Session: s}
	if res := tooltest.Call(context.Background(), t, echo(), uc, `{"text":3}`, nil); !res.IsError {
		t.Errorf("a number for a string ran: %q", res.Text)
	}
	if res := tooltest.Call(context.Background(), t, echo(), uc, `{"text":""}`, nil); res.IsError || res.Text != " in "+s.Cwd() {
		t.Errorf("result = %+v", res)
	}
}

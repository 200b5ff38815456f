package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/orchestrator/upstream"
	"github.com/agent-mcp/agent-mcp/tools"
)

func startUpstream(t *testing.T) *upstream.Manager {
	t.Helper()
	cmd, args, env := testmodel.UpstreamStdio()
	m := upstream.Start(context.Background(), []upstream.ServerConfig{
		{Name: "up", Type: "stdio", Command: cmd, Args: args, Env: env},
		{Name: "broken", Type: "stdio", Command: "/nonexistent/mcp-server"},
	}, upstream.Options{ConnectTimeout: 20 * time.Second})
	t.Cleanup(m.Close)
	return m
}

func toolNames(r testmodel.Request) []string {
	var out []string
	ts, _ := r.Body["tools"].([]any)
	for _, t := range ts {
		m := t.(map[string]any)
		if fn, ok := m["function"].(map[string]any); ok {
			out = append(out, fn["name"].(string))
		} else {
			out = append(out, m["name"].(string))
		}
	}
	return out
}

func TestUpstream(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			m := startUpstream(t)
			hasExtra := func(ctx context.Context) error {
				for ctx.Err() == nil {
					for _, tl := range m.Tools() {
						if tl.Name == "mcp__up__extra" {
							return nil
						}
					}
					time.Sleep(10 * time.Millisecond)
				}
				return errors.New("mcp__up__extra never appeared")
			}
			h := newHarness(t, format, options{builtins: []*tools.Tool{echoTool()}, mcp: m},
				testmodel.Call(call("e1", "mcp__up__echo", `{"text":"hi"}`), call("p1", "mcp__up__pid", `{}`)),
				testmodel.Call(call("c1", "mcp__up__crash", `{}`)),
				testmodel.Call(call("p2", "mcp__up__pid", `{}`)),
				testmodel.Reply{Parts: []testmodel.Part{{Tool: &testmodel.ToolCall{ID: "g1", Name: "mcp__up__grow", Input: `{}`}, Wait: hasExtra}}},
				testmodel.Call(call("x1", "mcp__up__extra", `{}`), call("s1", "mcp__up__add", `{"a":2,"b":3}`)),
				testmodel.Say("done"))
			if _, err := h.agent.Run(context.Background(), "use the server"); err != nil {
				t.Fatal(err)
			}
			reqs := h.srv.Requests()
			if len(reqs) != 6 {
				t.Fatalf("%d requests, want 6", len(reqs))
			}
			wantTools := []string{"Echo", "mcp__up__add", "mcp__up__crash", "mcp__up__echo", "mcp__up__grow", "mcp__up__pid", "mcp__up__slow"}
			if got := toolNames(reqs[0]); !slices.Equal(got, wantTools) {
				t.Errorf("tools offered = %v, want %v", got, wantTools)
			}
			if got := toolNames(reqs[4]); !slices.Contains(got, "mcp__up__extra") {
				t.Errorf("after list_changed, tools = %v, want mcp__up__extra among them", got)
			}
			msgs := messagesOf(t, reqs[5])
			find := func(id string) string {
				for _, l := range msgs {
					if strings.HasPrefix(l, "user: result "+id+" ") {
						return l
					}
				}
				t.Errorf("no result for %s in %q", id, msgs)
				return ""
			}
			if got := find("e1"); got != "user: result e1 error=false echo: hi" {
				t.Errorf("echo result = %q", got)
			}
			if got := find("c1"); !strings.Contains(got, "error=true") || !strings.Contains(got, "stopped") {
				t.Errorf("crash result = %q, want an error saying the server stopped", got)
			}
			pid1 := strings.TrimPrefix(find("p1"), "user: result p1 error=false ")
			pid2 := strings.TrimPrefix(find("p2"), "user: result p2 error=false ")
			if pid1 == "" || pid2 == "" || pid1 == pid2 || strings.Contains(pid2, "error") {
				t.Errorf("pid before crash %q, after %q: want two different pids (a restarted server)", pid1, pid2)
			}
			if got := find("x1"); got != "user: result x1 error=false extra" {
				t.Errorf("extra result = %q", got)
			}
			if got := find("s1"); got != `user: result s1 error=false {"sum":5}` {
				t.Errorf("add result = %q", got)
			}
			st := m.Status()
			if len(st) != 2 || st[0].Name != "broken" || st[0].State != upstream.Failed || !strings.Contains(st[0].Error, "/nonexistent/mcp-server") {
				t.Errorf("status = %+v, want broken failed naming its command", st)
			}
		})
	}
}

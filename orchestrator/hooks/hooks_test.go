//go:build !windows

package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/tools"
)

type echoIn struct {
	Command string `json:"command"`
}

// CommandLine makes echoIn a command line for the permission check, as
// Bash's input is.
func (in *echoIn) CommandLine() string { return in.Command }

// echoTool returns its command, so a test sees the input it ran with.
func echoTool() *tools.Tool {
	return tools.New(tools.Tool{
		Name: "Bash",
	}, tools.Handler[echoIn]{
		Call: func(_ context.Context, in *echoIn, _ *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			return &tools.Result{Text: "ran: " + in.Command, Output: map[string]any{"stdout": in.Command}}, nil
		},
	})
}

// script writes an executable hook script and returns the command running it.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

type env struct {
	dir  string
	sess *tools.Session
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := tools.NewSession(tools.SessionOptions{Cwd: ws, StateRoot: filepath.Join(dir, "state")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &env{dir: dir, sess: s}
}

func (e *env) run(t *testing.T, pre, post []settings.HookMatcher, p orchestrator.Permitter, command string) orchestrator.Outcome {
	t.Helper()
	r, err := New(Options{PreToolUse: pre, PostToolUse: post, ProjectDir: e.sess.Cwd()})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := orchestrator.AssemblePool([]*tools.Tool{echoTool()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := &orchestrator.Pipeline{Pool: pool, Hooks: r, Permit: p}
	in, _ := json.Marshal(map[string]string{"command": command})
	return pl.Run(context.Background(), &tools.UseContext{Session: e.sess}, orchestrator.Call{ID: "call1", Name: "Bash", Input: in}, nil)
}

func hook(matcher string, cmds ...string) []settings.HookMatcher {
	m := settings.HookMatcher{Matcher: matcher}
	for _, c := range cmds {
		m.Hooks = append(m.Hooks, settings.HookCommand{Type: "command", Command: c})
	}
	return []settings.HookMatcher{m}
}

func text(out orchestrator.Outcome) string {
	s := out.Result.Text
	for _, c := range out.Result.Extra {
		s += "\n" + c.Text
	}
	return s
}

func TestHooks_endToEnd(t *testing.T) {
	t.Parallel()
	t.Run("exit 2 blocks with stderr as the reason", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "block.sh", `cat >/dev/null; echo "rm is not allowed here" >&2; exit 2`)
		out := e.run(t, hook("Bash", h), nil, nil, "rm -rf x")
		if !out.Result.IsError || !strings.Contains(out.Result.Text, "rm is not allowed here") || strings.Contains(text(out), "ran:") {
			t.Fatalf("got %q", text(out))
		}
	})
	t.Run("the hook sees the event on stdin", func(t *testing.T) {
		e := newEnv(t)
		log := filepath.Join(e.dir, "event.json")
		h := script(t, e.dir, "log.sh", `cat > "`+log+`"; test "$CLAUDE_PROJECT_DIR" = "`+e.sess.Cwd()+`" || exit 1`)
		post := script(t, e.dir, "post.sh", `cat > "`+log+`.post"`)
		out := e.run(t, hook("", h), hook("*", post), nil, "ls")
		if out.Result.IsError {
			t.Fatal(text(out))
		}
		var ev map[string]any
		data, _ := os.ReadFile(log)
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("stdin %q: %v", data, err)
		}
		if ev["hook_event_name"] != "PreToolUse" || ev["tool_name"] != "Bash" || ev["cwd"] != e.sess.Cwd() ||
			ev["session_id"] != e.sess.ID() || ev["permission_mode"] != "default" || ev["tool_input"].(map[string]any)["command"] != "ls" {
			t.Fatalf("event %s", data)
		}
		data, _ = os.ReadFile(log + ".post")
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("stdin %q: %v", data, err)
		}
		if ev["hook_event_name"] != "PostToolUse" || ev["tool_response"].(map[string]any)["stdout"] != "ls" {
			t.Fatalf("post event %s", data)
		}
	})
	t.Run("updatedInput replaces the input", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "rewrite.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -la"}, "additionalContext": "rewritten by policy"}}'`)
		out := e.run(t, hook("Bash", h), nil, nil, "ls")
		if got := text(out); !strings.Contains(got, "ran: ls -la") || !strings.Contains(got, "rewritten by policy") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("an invalid updatedInput is refused", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "bad.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"updatedInput": {"cmd": 1}}}'`)
		out := e.run(t, hook("Bash", h), nil, nil, "ls")
		if !out.Result.IsError || strings.Contains(text(out), "ran:") {
			t.Fatalf("got %q", text(out))
		}
	})
	t.Run("permissionDecision deny refuses with its reason", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "deny.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "policy says no"}}'`)
		out := e.run(t, hook("Bash", h), nil, permit.New(permit.Options{TrustHost: true}), "ls")
		if !out.Result.IsError || !strings.Contains(out.Result.Text, "policy says no") || out.Decision.Behavior != permissions.Deny {
			t.Fatalf("got %q", text(out))
		}
	})
	t.Run("permissionDecision allow skips asking", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "allow.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'`)
		strict := permit.New(permit.Options{})
		if out := e.run(t, nil, nil, strict, "make"); !out.Result.IsError {
			t.Fatal("without the hook, make must be asked about (and refused, as nobody can answer)")
		}
		if out := e.run(t, hook("Bash", h), nil, strict, "make"); out.Result.IsError {
			t.Fatalf("got %q", text(out))
		}
	})
	t.Run("permissionDecision allow does not override a deny rule", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "allow.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'`)
		s := &settings.Settings{Rules: &permissions.RuleSet{}}
		if err := s.AddRules(permissions.Deny, []string{"Bash(make *)"}, "test", permissions.Anchors{Home: "/", Root: "/", Cwd: "/"}); err != nil {
			t.Fatal(err)
		}
		out := e.run(t, hook("Bash", h), nil, permit.New(permit.Options{Rules: s.Rules}), "make")
		if !out.Result.IsError || out.Decision.Rule != "Bash(make *)" {
			t.Fatalf("got %q", text(out))
		}
	})
	t.Run("other exit codes do not block", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "fail.sh", `cat >/dev/null; echo oops >&2; exit 1`)
		if out := e.run(t, hook("Bash", h), nil, nil, "ls"); out.Result.IsError {
			t.Fatalf("got %q", text(out))
		}
	})
	t.Run("a hook that times out is stopped and does not block", func(t *testing.T) {
		e := newEnv(t)
		pidFile := filepath.Join(e.dir, "pid")
		h := script(t, e.dir, "slow.sh", `sleep 30 & echo $! > "`+pidFile+`"; wait`)
		m := hook("Bash", h)
		m[0].Hooks[0].Timeout = 0.5
		out := e.run(t, m, nil, nil, "ls")
		if out.Result.IsError || !strings.Contains(text(out), "ran: ls") {
			t.Fatalf("got %q", text(out))
		}
		data, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		// The whole process group is killed: the background sleep goes too
		// (it may linger briefly as a zombie until init reaps it).
		testbin.WaitFor(t, fmt.Sprintf("the hook's child %d to end", pid), func() bool {
			return syscall.Kill(pid, 0) != nil || isZombie(pid)
		})
	})
	t.Run("matchers select tools", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "block.sh", `cat >/dev/null; echo blocked >&2; exit 2`)
		for matcher, blocks := range map[string]bool{"Bash": true, "Write|Bash": true, "Write|Edit": false, "Ba.*": true, "^Read$": false, "Bas": false} {
			out := e.run(t, hook(matcher, h), nil, nil, "ls")
			if out.Result.IsError != blocks {
				t.Errorf("matcher %q: blocked = %v, want %v", matcher, out.Result.IsError, blocks)
			}
		}
	})
	t.Run("PostToolUse exit 2 tells the model", func(t *testing.T) {
		e := newEnv(t)
		h := script(t, e.dir, "post.sh", `cat >/dev/null; echo "lint failed: fix it" >&2; exit 2`)
		ctx := script(t, e.dir, "ctx.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"additionalContext": "formatted"}}'`)
		out := e.run(t, nil, hook("Bash", h, ctx), nil, "ls")
		got := text(out)
		if !out.Result.IsError || !strings.Contains(got, "lint failed: fix it") || !strings.Contains(got, "formatted") || !strings.Contains(got, "ran: ls") {
			t.Fatalf("got %q", got)
		}
	})
}

func TestNew_badMatcher(t *testing.T) {
	t.Parallel()
	_, err := New(Options{PreToolUse: hook("Bash(", "true")})
	if err == nil || !strings.Contains(err.Error(), "hooks.PreToolUse[0].matcher") {
		t.Fatalf("got %v", err)
	}
}

// isZombie reports whether pid has exited but is not yet reaped.
func isZombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

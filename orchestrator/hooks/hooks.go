package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox/proc"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
)

// defaultTimeout bounds a hook that sets no timeout of its own.
const defaultTimeout = 60 * time.Second

// maxOutput bounds how much of a hook's stdout and stderr is kept.
const maxOutput = 1 << 20

// Options configure the hook runner.
type Options struct {
	PreToolUse, PostToolUse []settings.HookMatcher
	// ProjectDir is given to hooks as CLAUDE_PROJECT_DIR.
	ProjectDir string
	// Timeout is the default per-hook timeout; 0 is defaultTimeout.
	Timeout time.Duration
	// Shell runs each command as Shell -c COMMAND; default /bin/sh.
	Shell string
}

// Runner implements orchestrator.Hooks.
type Runner struct {
	cfg  Options
	pre  []compiled
	post []compiled
}

var _ orchestrator.Hooks = (*Runner)(nil)

type compiled struct {
	match func(tool string) bool
	hooks []settings.HookCommand
}

// New compiles the matchers. A matcher that is neither a name list nor a
// valid regular expression is an error naming it.
func New(cfg Options) (*Runner, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.Shell == "" {
		cfg.Shell = "/bin/sh"
	}
	r := &Runner{cfg: cfg}
	var err error
	if r.pre, err = compile("PreToolUse", cfg.PreToolUse); err != nil {
		return nil, err
	}
	if r.post, err = compile("PostToolUse", cfg.PostToolUse); err != nil {
		return nil, err
	}
	return r, nil
}

// Empty reports whether no hook is configured.
func (r *Runner) Empty() bool { return len(r.pre) == 0 && len(r.post) == 0 }

var nameList = regexp.MustCompile(`^[A-Za-z0-9_\-|]+$`)

func compile(event string, ms []settings.HookMatcher) ([]compiled, error) {
	var out []compiled
	for i, m := range ms {
		c := compiled{hooks: m.Hooks}
		switch pat := strings.TrimSpace(m.Matcher); {
		case pat == "" || pat == "*":
			c.match = func(string) bool { return true }
		case nameList.MatchString(pat):
			names := strings.Split(pat, "|")
			c.match = func(tool string) bool {
				for _, n := range names {
					if n == tool {
						return true
					}
				}
				return false
			}
		default:
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, fmt.Errorf("hooks.%s[%d].matcher %q is not a tool name, a|b list or valid regular expression: %w", event, i, m.Matcher, err)
			}
			c.match = re.MatchString
		}
		out = append(out, c)
	}
	return out, nil
}

// commands lists the command hooks selecting tool, without duplicates.
func commands(cs []compiled, tool string) []settings.HookCommand {
	var out []settings.HookCommand
	seen := map[string]bool{}
	for _, c := range cs {
		if !c.match(tool) {
			continue
		}
		for _, h := range c.hooks {
			if (h.Type != "" && h.Type != "command") || strings.TrimSpace(h.Command) == "" || seen[h.Command] {
				continue
			}
			seen[h.Command] = true
			out = append(out, h)
		}
	}
	return out
}

// input is what a hook reads on stdin.
type input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	ToolResponse   any             `json:"tool_response,omitempty"`
}

// output is what a hook may print on stdout.
type output struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// result is one hook's run.
type result struct {
	cmd      string
	exit     int
	stdout   string
	stderr   string
	out      *output
	err      error
	timedOut bool
}

// PreToolUse runs the PreToolUse hooks selecting the tool.
func (r *Runner) PreToolUse(ctx context.Context, ev orchestrator.HookEvent) (orchestrator.PreOutcome, error) {
	var po orchestrator.PreOutcome
	results := r.runAll(ctx, r.pre, "PreToolUse", ev)
	var errs []error
	var contexts, blocks []string
	decision := permissions.Decision{}
	rank := map[permissions.Behavior]int{permissions.Passthrough: 0, permissions.Allow: 1, permissions.Ask: 2, permissions.Deny: 3}
	for _, res := range results {
		if res.err != nil {
			errs = append(errs, res.err)
			continue
		}
		if res.exit == 2 {
			blocks = append(blocks, reasonOr(res.stderr, "a PreToolUse hook ("+res.cmd+") blocked the call"))
			continue
		}
		if res.out == nil {
			continue
		}
		o := res.out
		if o.Continue != nil && !*o.Continue {
			blocks = append(blocks, reasonOr(o.StopReason, "a PreToolUse hook ("+res.cmd+") stopped the call"))
			continue
		}
		d := permissions.Decision{}
		switch strings.ToLower(o.HookSpecificOutput.PermissionDecision) {
		case "allow":
			d = permissions.Decision{Behavior: permissions.Allow, Reason: o.HookSpecificOutput.PermissionDecisionReason}
		case "deny":
			d = permissions.Decision{Behavior: permissions.Deny, Reason: o.HookSpecificOutput.PermissionDecisionReason}
		case "ask":
			d = permissions.Decision{Behavior: permissions.Ask, Reason: o.HookSpecificOutput.PermissionDecisionReason}
		case "":
			switch strings.ToLower(o.Decision) {
			case "approve":
				d = permissions.Decision{Behavior: permissions.Allow, Reason: o.Reason}
			case "block":
				d = permissions.Decision{Behavior: permissions.Deny, Reason: o.Reason}
			}
		default:
			errs = append(errs, fmt.Errorf("hook %q: permissionDecision %q is not allow, deny or ask", res.cmd, o.HookSpecificOutput.PermissionDecision))
		}
		if d.Behavior == permissions.Deny && d.Reason == "" {
			d.Reason = "A PreToolUse hook (" + res.cmd + ") denied the call."
		}
		if d.Behavior == permissions.Ask && d.Reason == "" {
			d.Reason = "A PreToolUse hook (" + res.cmd + ") asks for confirmation."
		}
		if rank[d.Behavior] > rank[decision.Behavior] {
			decision = d
		}
		if u := o.HookSpecificOutput.UpdatedInput; len(u) > 0 && !bytes.Equal(bytes.TrimSpace(u), []byte("null")) {
			po.UpdatedInput = u
		}
		if c := o.HookSpecificOutput.AdditionalContext; c != "" {
			contexts = append(contexts, c)
		}
	}
	if len(blocks) > 0 {
		po.Block = true
		po.Reason = strings.Join(blocks, "\n")
		po.Decision = permissions.Decision{Behavior: permissions.Deny, Reason: po.Reason}
		po.UpdatedInput = nil
	} else {
		po.Decision = decision
	}
	po.AdditionalContext = strings.Join(contexts, "\n")
	return po, errors.Join(errs...)
}

// PostToolUse runs the PostToolUse hooks selecting the tool.
func (r *Runner) PostToolUse(ctx context.Context, ev orchestrator.HookEvent) (orchestrator.PostOutcome, error) {
	var po orchestrator.PostOutcome
	results := r.runAll(ctx, r.post, "PostToolUse", ev)
	var errs []error
	var contexts, feedback []string
	for _, res := range results {
		switch {
		case res.err != nil:
			errs = append(errs, res.err)
		case res.exit == 2:
			feedback = append(feedback, reasonOr(res.stderr, "a PostToolUse hook ("+res.cmd+") objected"))
		case res.out != nil:
			if strings.EqualFold(res.out.Decision, "block") {
				feedback = append(feedback, reasonOr(res.out.Reason, "a PostToolUse hook ("+res.cmd+") objected"))
			}
			if c := res.out.HookSpecificOutput.AdditionalContext; c != "" {
				contexts = append(contexts, c)
			}
		}
	}
	po.AdditionalContext = strings.Join(contexts, "\n")
	po.Feedback = strings.Join(feedback, "\n")
	return po, errors.Join(errs...)
}

func reasonOr(s, dflt string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return dflt
}

// runAll runs the selected hooks in parallel and returns their results in
// settings order.
func (r *Runner) runAll(ctx context.Context, cs []compiled, event string, ev orchestrator.HookEvent) []result {
	cmds := commands(cs, ev.Name)
	if len(cmds) == 0 {
		return nil
	}
	in := input{HookEventName: event, ToolName: ev.Name, ToolInput: ev.Input}
	if len(in.ToolInput) == 0 {
		in.ToolInput = json.RawMessage("{}")
	}
	if ev.UC != nil {
		in.ToolUseID = ev.UC.CallID
		if s := ev.UC.Session; s != nil {
			in.SessionID, in.Cwd, in.PermissionMode = s.ID(), s.Cwd(), string(s.Mode())
		}
	}
	if event == "PostToolUse" && ev.Result != nil {
		if ev.Result.Output != nil {
			in.ToolResponse = ev.Result.Output
		} else {
			in.ToolResponse = map[string]any{"text": ev.Result.Text, "isError": ev.Result.IsError}
		}
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return []result{{err: fmt.Errorf("%s hooks: encoding the event: %w", event, err)}}
	}
	results := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, h := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.runOne(ctx, h, in.Cwd, stdin)
		}()
	}
	wg.Wait()
	return results
}

// runOne runs one hook in its own process group, killing the group on
// timeout or cancellation.
func (r *Runner) runOne(ctx context.Context, h settings.HookCommand, cwd string, stdin []byte) result {
	res := result{cmd: h.Command}
	timeout := r.cfg.Timeout
	if h.Timeout > 0 {
		timeout = time.Duration(h.Timeout * float64(time.Second))
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(hctx, r.cfg.Shell, "-c", h.Command)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+r.cfg.ProjectDir, "AGENT_MCP_PROJECT_DIR="+r.cfg.ProjectDir)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A group of its own, ended whole when the hook is cancelled.
	proc.StartInGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	res.stdout, res.stderr = stdout.String(), stderr.String()
	var exitErr *exec.ExitError
	switch {
	case hctx.Err() != nil && ctx.Err() == nil:
		res.timedOut = true
		res.err = fmt.Errorf("hook %q did not finish within %s and was stopped", h.Command, timeout)
		return res
	case ctx.Err() != nil:
		res.err = fmt.Errorf("hook %q: %w", h.Command, ctx.Err())
		return res
	case errors.As(err, &exitErr):
		res.exit = exitErr.ExitCode()
	case err != nil:
		res.err = fmt.Errorf("hook %q could not run: %w", h.Command, err)
		return res
	}
	switch res.exit {
	case 0:
		if t := strings.TrimSpace(res.stdout); strings.HasPrefix(t, "{") {
			var o output
			if err := json.Unmarshal([]byte(t), &o); err != nil {
				res.err = fmt.Errorf("hook %q printed JSON that does not parse: %w", h.Command, err)
				return res
			}
			res.out = &o
		}
	case 2:
	default:
		res.err = fmt.Errorf("hook %q exited with status %d: %s", h.Command, res.exit, strings.TrimSpace(res.stderr))
	}
	return res
}

// capped keeps the first maxOutput bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := maxOutput - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/orchestrator/upstream"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// REPL is the interactive chat loop.
type REPL struct {
	UI      *UI
	Agent   *agent.Agent
	Session *tools.Session
	// Model is shown in the banner.
	Model string
	// Servers lists the upstream servers for /mcp; nil means none.
	Servers func() []upstream.Status
	// Permissions describes the permission rules for /permissions.
	Permissions func() string
	// NewConversation starts a fresh saved conversation for /clear; nil
	// means conversations are not saved.
	NewConversation func() (*agent.Conversation, error)
	// Interrupts delivers Ctrl-C (SIGINT): it cancels the running turn,
	// and a second one (or one at the prompt right after) exits.
	Interrupts <-chan os.Signal
	// NewModel makes the model named by a "provider/name" spec for /model;
	// nil means the model cannot be switched.
	NewModel func(spec string) (llm.Model, error)
	// Store holds the saved conversations for /resume; nil means none.
	Store *agent.Store
	// PickResume starts with a picker of the saved conversations
	// (--resume without an id).
	PickResume bool

	// usage sums the tokens of each model used, by name, for /cost.
	usage map[string]llm.Usage
	// ctx is the session's context, for the commands that call the model.
	ctx context.Context
}

// ErrInterrupted is returned when the user pressed Ctrl-C twice.
var ErrInterrupted = errors.New("interrupted")

// Run reads prompts until /exit, end of input (Ctrl-D), two Ctrl-C in a
// row (ErrInterrupted) or the end of ctx.
func (r *REPL) Run(ctx context.Context) error {
	u := r.UI
	r.ctx = ctx
	u.Printf("agent-mcp chat · %s · %s\nType /help for commands.\n", r.Model, r.Session.Cwd())
	r.setupKeys()
	if r.PickResume {
		if err := r.resume(ctx, ""); err != nil {
			u.Printf("%s\n", u.style("31", "--resume: "+err.Error()))
		}
	} else if msgs := r.Agent.Messages(); len(msgs) > 0 {
		u.Replay(msgs)
		if c := r.Agent.Store(); c != nil {
			u.Printf("Resumed conversation %s (%d messages).\n", c.ID, len(msgs))
		}
	}
	// interrupted is set while the last thing the user did was Ctrl-C
	// (cancelling a turn, or at the prompt): another one exits.
	interrupted := false
	for {
		line, err := r.prompt(ctx)
		switch {
		case errors.Is(err, ErrInterruptKey):
			if interrupted {
				u.Printf("\n")
				return ErrInterrupted
			}
			interrupted = true
			u.Printf("%s\n", u.style("2", "(Ctrl-C again to exit, or type /exit.)"))
			continue
		case errors.Is(err, io.EOF):
			u.Printf("\n")
			return nil
		case err != nil:
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		interrupted = false
		if strings.HasPrefix(line, "/") {
			prompt, custom, err := r.custom(line)
			switch {
			case custom && err != nil:
				u.Printf("%v\n", err)
				continue
			case custom:
				line = prompt
			default:
				quit, err := r.command(line)
				if err != nil {
					u.Printf("%v\n", err)
				}
				if quit {
					return nil
				}
				continue
			}
		}
		if full, files := attachFiles(line, r.Session.Cwd()); len(files) > 0 {
			u.Printf("%s\n", u.style("2", "· Attached "+strings.Join(files, ", ")))
			line = full
		}
		cancelled, err := r.turn(ctx, line)
		if err != nil {
			if errors.Is(err, ErrInterrupted) {
				return err
			}
			u.Printf("%s\n", u.style("31", "Error: "+err.Error()))
		}
		interrupted = cancelled
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// prompt reads the next line at the "> " prompt. Ctrl-C there is
// ErrInterruptKey, whether it comes as a key (terminal in raw mode) or as
// SIGINT (plain input); ctx's end stops the wait.
func (r *REPL) prompt(ctx context.Context) (string, error) {
	pctx, cancel := context.WithCancel(ctx)
	var sigint atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-r.Interrupts:
			sigint.Store(true)
			cancel()
		case <-pctx.Done():
		}
	}()
	line, err := r.UI.ReadLineContext(pctx, "> ")
	cancel()
	<-watched
	if sigint.Load() {
		return "", ErrInterruptKey
	}
	return line, err
}

// turn runs one prompt; Ctrl-C (SIGINT, or the key while a form is
// answered) cancels it, a second Ctrl-C exits. cancelled reports that the
// user cancelled the turn.
func (r *REPL) turn(ctx context.Context, prompt string) (cancelled bool, err error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	interrupted := false
	exit := make(chan struct{})
	// interrupt handles one Ctrl-C; it reports false once it has exited.
	interrupt := func() bool {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-exit:
			return false
		default:
		}
		if interrupted {
			close(exit)
			return false
		}
		interrupted = true
		// Said before cancelling, so it comes before the turn's end.
		r.UI.Printf("%s\n", r.UI.style("33", "Interrupted: cancelling the turn (Ctrl-C again to exit)."))
		cancel()
		return true
	}
	r.UI.SetInterruptKey(func() { interrupt() })
	defer r.UI.SetInterruptKey(nil)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-done:
				return
			case <-r.Interrupts:
				if !interrupt() {
					return
				}
			}
		}
	}()
	before := r.Agent.Usage()
	res, err := r.Agent.Run(tctx, prompt)
	r.count(r.Agent.Usage(), before)
	close(done)
	<-watched
	r.UI.SetInterruptKey(nil)
	mu.Lock()
	defer mu.Unlock()
	select {
	case <-exit:
		return true, ErrInterrupted
	default:
	}
	r.UI.Printf("")
	if res != nil {
		line := usageLine(r.Agent.Usage(), before, res.Turns)
		if g := ContextGauge(r.Agent.ContextUsed(), r.Agent.ContextWindow()); g != "" && r.Agent.ContextUsed() > 0 {
			line += " · " + g
		}
		r.UI.Printf("%s\n", r.UI.style("2", line))
	}
	if interrupted && ctx.Err() == nil {
		return true, nil // the user cancelled; already said
	}
	return false, err
}

// setupKeys gives the terminal UI the commands for its menu, the
// permission modes Shift+Tab cycles through, and the context's size.
func (r *REPL) setupKeys() {
	u := r.UI
	cs := menuCommands()
	home, _ := os.UserHomeDir()
	for _, c := range customCommands(r.Session.Cwd(), home) {
		cs = append(cs, Command{Name: c.name, Desc: c.description})
	}
	u.SetCommands(cs)
	cycle := []permissions.Mode{permissions.ModeDefault, permissions.ModeAcceptEdits, permissions.ModePlan}
	if start := r.Session.Mode(); !slices.Contains(cycle, start) {
		cycle = append(cycle, start) // a mode the session started in stays reachable
	}
	u.SetModeCycle(func() string { return string(r.Session.Mode()) }, func() {
		i := slices.Index(cycle, r.Session.Mode())
		r.Session.SetMode(cycle[(i+1)%len(cycle)])
	})
	u.SetContextWindow(r.Agent.ContextWindow())
}

func usageLine(now, before llm.Usage, turns int) string {
	in := now.InputTokens - before.InputTokens
	out := now.OutputTokens - before.OutputTokens
	s := fmt.Sprintf("tokens: %d in, %d out", in, out)
	if cr := now.CacheReadTokens - before.CacheReadTokens; cr > 0 {
		s += fmt.Sprintf(", %d cached", cr)
	}
	return fmt.Sprintf("%s · %d model call(s) · session total %d in, %d out", s, turns, now.InputTokens, now.OutputTokens)
}

// custom finds the custom command line names; prompt is what it sends.
func (r *REPL) custom(line string) (prompt string, ok bool, err error) {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if _, builtin := builtinCommand(name); builtin {
		return "", false, nil
	}
	home, _ := os.UserHomeDir()
	for _, c := range customCommands(r.Session.Cwd(), home) {
		if c.name == name {
			p, err := expandCommand(c, strings.TrimSpace(args))
			return p, true, err
		}
	}
	return "", false, nil
}

// DefaultThinkingBudget is the extended thinking budget of --think and
// /think on.
const DefaultThinkingBudget = 8192

// count adds the tokens used since before to the current model's total.
func (r *REPL) count(now, before llm.Usage) {
	if r.usage == nil {
		r.usage = map[string]llm.Usage{}
	}
	r.usage[r.Model] = r.usage[r.Model].Add(llm.Usage{
		InputTokens: now.InputTokens - before.InputTokens, OutputTokens: now.OutputTokens - before.OutputTokens,
		CacheReadTokens: now.CacheReadTokens - before.CacheReadTokens, CacheWriteTokens: now.CacheWriteTokens - before.CacheWriteTokens,
	})
}

// costReport lists the tokens of each model used and, for models in the
// price table, the estimated price.
func (r *REPL) costReport() string {
	if len(r.usage) == 0 {
		return "No model calls yet.\n"
	}
	names := make([]string, 0, len(r.usage))
	for n := range r.usage {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	total, priced := 0.0, false
	for _, n := range names {
		us := r.usage[n]
		fmt.Fprintf(&b, "  %s: %d in, %d out", n, us.InputTokens, us.OutputTokens)
		if us.CacheReadTokens > 0 || us.CacheWriteTokens > 0 {
			fmt.Fprintf(&b, ", %d cache read, %d cache write", us.CacheReadTokens, us.CacheWriteTokens)
		}
		if c, ok := EstimateCost(n, us); ok {
			fmt.Fprintf(&b, " · about $%.4f", c)
			total += c
			priced = true
		} else {
			b.WriteString(" · no price known for this model")
		}
		b.WriteString("\n")
	}
	if priced {
		fmt.Fprintf(&b, "Estimated total: $%.4f (list prices; the provider's bill is what counts)\n", total)
	}
	return b.String()
}

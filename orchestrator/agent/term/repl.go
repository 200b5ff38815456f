package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/providers"
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
	// Interrupts delivers Ctrl-C (SIGINT) while a turn runs.
	Interrupts <-chan os.Signal
}

// ErrInterrupted is returned when the user pressed Ctrl-C twice.
var ErrInterrupted = errors.New("interrupted")

const helpText = `Commands:
  /help          this help
  /tools         the tools the model can use
  /mcp           upstream MCP servers and their status
  /permissions   the permission mode and rules
  /mode [MODE]   show or set the permission mode (default, acceptEdits, plan, dontAsk, bypassPermissions)
  /clear         start a new conversation
  /exit          leave (also Ctrl-D)
Ctrl-C cancels the running turn and its tools; a second Ctrl-C exits.
`

// Run reads prompts until /exit, end of input or a second Ctrl-C.
func (r *REPL) Run(ctx context.Context) error {
	u := r.UI
	u.Printf("agent-mcp chat · %s · %s\nType /help for commands.\n", r.Model, r.Session.Cwd())
	for {
		line, err := u.ReadLine("> ")
		if errors.Is(err, io.EOF) {
			u.Printf("\n")
			return nil
		}
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			quit, err := r.command(line)
			if err != nil {
				u.Printf("%v\n", err)
			}
			if quit {
				return nil
			}
			continue
		}
		if err := r.turn(ctx, line); err != nil {
			if errors.Is(err, ErrInterrupted) {
				return err
			}
			u.Printf("%s\n", u.style("31", "Error: "+err.Error()))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// turn runs one prompt; Ctrl-C cancels it, a second Ctrl-C exits.
func (r *REPL) turn(ctx context.Context, prompt string) error {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	exit := make(chan struct{})
	go func() {
		interrupted := false
		for {
			select {
			case <-done:
				return
			case <-r.Interrupts:
				if interrupted {
					close(exit)
					return
				}
				interrupted = true
				cancel()
				r.UI.Printf("%s\n", r.UI.style("33", "Interrupted: cancelling the turn (Ctrl-C again to exit)."))
			}
		}
	}()
	before := r.Agent.Usage()
	res, err := r.Agent.Run(tctx, prompt)
	close(done)
	select {
	case <-exit:
		return ErrInterrupted
	default:
	}
	r.UI.Printf("")
	if res != nil {
		r.UI.Printf("%s\n", r.UI.style("2", usageLine(r.Agent.Usage(), before, res.Turns)))
	}
	if err != nil && tctx.Err() != nil && ctx.Err() == nil {
		return nil // the user cancelled; already said
	}
	return err
}

func usageLine(now, before providers.Usage, turns int) string {
	in := now.InputTokens - before.InputTokens
	out := now.OutputTokens - before.OutputTokens
	s := fmt.Sprintf("tokens: %d in, %d out", in, out)
	if cr := now.CacheReadTokens - before.CacheReadTokens; cr > 0 {
		s += fmt.Sprintf(", %d cached", cr)
	}
	return fmt.Sprintf("%s · %d model call(s) · session total %d in, %d out", s, turns, now.InputTokens, now.OutputTokens)
}

// command runs a slash command; quit is true for /exit.
func (r *REPL) command(line string) (quit bool, err error) {
	u := r.UI
	fields := strings.Fields(line)
	switch fields[0] {
	case "/help":
		u.Printf("%s", helpText)
	case "/exit", "/quit":
		return true, nil
	case "/tools":
		pool := r.Agent.Pipeline().Pool
		for i, t := range pool.Tools() {
			kind := "built-in"
			if i >= pool.Builtins() {
				kind = "mcp"
			}
			u.Printf("  %-40s %s\n", t.Name(), kind)
		}
	case "/mcp":
		if r.Servers == nil || len(r.Servers()) == 0 {
			u.Printf("No upstream MCP servers are configured (.mcp.json, --mcp-config).\n")
			return false, nil
		}
		for _, s := range r.Servers() {
			line := fmt.Sprintf("  %-20s %-6s %-10s %d tools", s.Name, s.Type, s.State, s.Tools)
			if s.Error != "" {
				line += " · " + s.Error
			}
			u.Printf("%s\n", line)
		}
	case "/permissions":
		u.Printf("Mode: %s\n", r.Session.Mode())
		if r.Permissions != nil {
			u.Printf("%s\n", strings.TrimRight(r.Permissions(), "\n"))
		}
	case "/mode":
		if len(fields) == 1 {
			u.Printf("Mode: %s\n", r.Session.Mode())
			return false, nil
		}
		m, err := permissions.ParseMode(fields[1])
		if err != nil {
			return false, err
		}
		r.Session.SetMode(m)
		u.Printf("Mode: %s\n", m)
	case "/clear":
		r.Agent.SetMessages(nil)
		if r.NewConversation != nil {
			c, err := r.NewConversation()
			if err != nil {
				return false, err
			}
			r.Agent.SetStore(c)
			u.Printf("New conversation %s.\n", c.ID)
		} else {
			u.Printf("Conversation cleared.\n")
		}
	default:
		return false, fmt.Errorf("unknown command %s: type /help for the list", fields[0])
	}
	return false, nil
}

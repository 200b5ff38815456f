package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/agent-mcp/agent-mcp/internal/providers"
	"github.com/agent-mcp/agent-mcp/permissions"
)

// slashCommand is a built-in slash command: the one row the menu, /help,
// the names a custom command cannot take, and the dispatch all read.
type slashCommand struct {
	// name is the command without its slash; aliases are further names
	// that run it (not shown).
	name    string
	aliases []string
	// args is how its arguments are written in /help ("[MODE]").
	args string
	// brief is what the menu shows; help is /help's line.
	brief, help string
	// run carries it out: line is what was typed, fields its words (the
	// command first). quit ends the chat.
	run func(r *REPL, line string, fields []string) (quit bool, err error)
}

// slashCommands are the built-in commands, in the order the menu and
// /help list them. It is filled in init: /help's handler reads it.
var slashCommands []slashCommand

func init() {
	slashCommands = []slashCommand{
		{name: "help", brief: "this help", help: "this help", run: (*REPL).cmdHelp},
		{name: "tools", brief: "the tools the model can use", help: "the tools the model can use", run: (*REPL).cmdTools},
		{name: "mcp", brief: "upstream MCP servers", help: "upstream MCP servers and their status", run: (*REPL).cmdMcp},
		{name: "permissions", brief: "the permission mode and rules", help: "the permission mode and rules", run: (*REPL).cmdPermissions},
		{name: "mode", args: "[MODE]", brief: "show or set the permission mode", help: "show or set the permission mode (default, acceptEdits, plan, dontAsk, bypassPermissions)", run: (*REPL).cmdMode},
		{name: "clear", brief: "start a new conversation", help: "start a new conversation", run: (*REPL).cmdClear},
		{name: "resume", args: "[ID]", brief: "continue a saved conversation", help: "pick a saved conversation of this directory (or give its id) and continue it", run: (*REPL).cmdResume},
		{name: "model", args: "[SPEC]", brief: "show or switch the model", help: "show or switch the model (provider/name, e.g. openai/gpt-4.1; a bare name keeps the provider)", run: (*REPL).cmdModel},
		{name: "compact", args: "[INSTRUCTIONS]", brief: "replace the conversation with a summary", help: "replace the conversation with a summary (what to keep, optionally)", run: (*REPL).cmdCompact},
		{name: "cost", brief: "tokens used and their price", help: "tokens used and their estimated price, per model", run: (*REPL).cmdCost},
		{name: "fullscreen", brief: "toggle full-screen mode", help: "toggle full-screen mode (the alternate screen; also --fullscreen)", run: (*REPL).cmdFullscreen},
		{name: "think", args: "[on|off|TOKENS]", brief: "toggle thinking", help: "toggle thinking: Anthropic's budget, OpenAI-compatible reasoning effort (shown dimmed)", run: (*REPL).cmdThink},
		{name: "exit", aliases: []string{"quit"}, brief: "leave", help: "leave (also Ctrl-D)", run: (*REPL).cmdExit},
	}
}

// builtinCommand finds the built-in command name (without its slash) runs.
func builtinCommand(name string) (slashCommand, bool) {
	for _, c := range slashCommands {
		if c.name == name || slices.Contains(c.aliases, name) {
			return c, true
		}
	}
	return slashCommand{}, false
}

// menuCommands are the built-in commands as the menu offers them.
func menuCommands() []Command {
	cs := make([]Command, 0, len(slashCommands))
	for _, c := range slashCommands {
		cs = append(cs, Command{Name: c.name, Desc: c.brief})
	}
	return cs
}

// keysHelp is what /help says after the commands.
const keysHelp = `Ctrl-C cancels the running turn and its tools (or a question being asked);
a second Ctrl-C exits. Ctrl-D at an empty prompt exits too. Ctrl-O shows
every output cut short (inline: the transcript over the screen, Ctrl-O or
Esc goes back; with --fullscreen: expanded and collapsed in place, PgUp/PgDn
and the mouse wheel scroll the conversation).
Keys in the terminal UI: typing / lists the commands, narrowing as you
type (Tab completes); Shift+Tab cycles the permission mode (default,
acceptEdits, plan); Ctrl-R searches the prompts typed before (type to
narrow, Ctrl-R for an older one, Enter to take it, Esc to leave); Esc
refuses a permission question. The spinner and each turn's token line
show how full the model's context window is.
`

// helpText is /help's list of the built-in commands and the keys.
func helpText() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range slashCommands {
		use := "/" + c.name
		if c.args != "" {
			use += " " + c.args
		}
		b.WriteString("  " + use + strings.Repeat(" ", max(2, 15-len(use))) + c.help + "\n")
	}
	return b.String() + keysHelp
}

// command runs a built-in slash command; quit is true for /exit.
func (r *REPL) command(line string) (quit bool, err error) {
	fields := strings.Fields(line)
	c, ok := builtinCommand(strings.TrimPrefix(fields[0], "/"))
	if !ok || !strings.HasPrefix(fields[0], "/") {
		return false, fmt.Errorf("unknown command %s: type /help for the list", fields[0])
	}
	return c.run(r, line, fields)
}

// cmdHelp prints the commands, the custom ones and the keys.
func (r *REPL) cmdHelp(line string, fields []string) (quit bool, err error) {
	u := r.UI
	u.Printf("%s", helpText())
	home, _ := os.UserHomeDir()
	if cs := customCommands(r.Session.Cwd(), home); len(cs) > 0 {
		u.Printf("Custom commands (.claude/commands/*.md; $ARGUMENTS is what follows the command):\n")
		for _, c := range cs {
			u.Printf("  /%-13s %s\n", c.name, c.description)
		}
	}
	return false, nil
}

// cmdTools lists the tools of the pool, built-in or from MCP servers.
func (r *REPL) cmdTools(line string, fields []string) (quit bool, err error) {
	u := r.UI
	pool := r.Agent.Pipeline().Pool
	for i, t := range pool.Tools() {
		kind := "built-in"
		if i >= pool.Builtins() {
			kind = "mcp"
		}
		u.Printf("  %-40s %s\n", t.Name, kind)
	}
	return false, nil
}

// cmdMcp lists the upstream MCP servers and their state.
func (r *REPL) cmdMcp(line string, fields []string) (quit bool, err error) {
	u := r.UI
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
	return false, nil
}

// cmdPermissions shows the permission mode and rules.
func (r *REPL) cmdPermissions(line string, fields []string) (quit bool, err error) {
	u := r.UI
	u.Printf("Mode: %s\n", r.Session.Mode())
	if r.Permissions != nil {
		u.Printf("%s\n", strings.TrimRight(r.Permissions(), "\n"))
	}
	return false, nil
}

// cmdMode shows or sets the permission mode.
func (r *REPL) cmdMode(line string, fields []string) (quit bool, err error) {
	u := r.UI
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
	return false, nil
}

// cmdClear starts a new conversation.
func (r *REPL) cmdClear(line string, fields []string) (quit bool, err error) {
	u := r.UI
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
	return false, nil
}

// cmdResume continues a saved conversation.
func (r *REPL) cmdResume(line string, fields []string) (quit bool, err error) {
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	id := ""
	if len(fields) > 1 {
		id = fields[1]
	}
	if err := r.resume(ctx, id); err != nil {
		return false, fmt.Errorf("/resume: %w", err)
	}
	return false, nil
}

// cmdModel shows or switches the model.
func (r *REPL) cmdModel(line string, fields []string) (quit bool, err error) {
	u := r.UI
	if len(fields) == 1 {
		u.Printf("Model: %s\n", r.Model)
		return false, nil
	}
	if r.NewModel == nil {
		return false, errors.New("/model: this chat cannot switch models")
	}
	spec := fields[1]
	if prov, _, ok := strings.Cut(r.Model, "/"); ok && !strings.Contains(spec, "/") && !strings.HasPrefix(spec, "claude") {
		// A bare name stays with the current provider.
		spec = prov + "/" + spec
	}
	m, err := r.NewModel(spec)
	if err != nil {
		return false, fmt.Errorf("/model: %w", err)
	}
	r.Agent.SetModel(m)
	r.Model = spec
	u.Printf("Model: %s (from the next request on)\n", r.Model)
	return false, nil
}

// cmdCompact replaces the conversation with a summary.
func (r *REPL) cmdCompact(line string, fields []string) (quit bool, err error) {
	u := r.UI
	instructions := strings.TrimSpace(strings.TrimPrefix(line, fields[0]))
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	before := r.Agent.Usage()
	u.Printf("%s\n", u.style("2", "Compacting the conversation…"))
	n, err := r.Agent.Compact(ctx, instructions)
	r.count(r.Agent.Usage(), before)
	if err != nil {
		return false, fmt.Errorf("/compact: %w", err)
	}
	if n == 0 {
		u.Printf("Nothing to compact.\n")
		return false, nil
	}
	u.Printf("Compacted %d message(s) into a summary.\n", n)
	return false, nil
}

// cmdCost shows the tokens used and their price.
func (r *REPL) cmdCost(line string, fields []string) (quit bool, err error) {
	u := r.UI
	u.Printf("%s", r.costReport())
	return false, nil
}

// cmdFullscreen turns full-screen mode on or off.
func (r *REPL) cmdFullscreen(line string, fields []string) (quit bool, err error) {
	u := r.UI
	if !u.Full() {
		return false, errors.New("/fullscreen: only in the full terminal UI (a terminal that takes colours)")
	}
	on := !u.FullScreen()
	u.SetFullScreen(on)
	if on {
		u.Printf("Full screen: on (PgUp/PgDn and the mouse wheel scroll; /fullscreen again goes back)\n")
	} else {
		u.Printf("Full screen: off\n")
	}
	return false, nil
}

// cmdThink turns extended thinking on or off, or sets its budget.
func (r *REPL) cmdThink(line string, fields []string) (quit bool, err error) {
	u := r.UI
	budget := 0
	switch {
	case len(fields) == 1 && r.Agent.Thinking() == 0, len(fields) > 1 && fields[1] == "on":
		budget = DefaultThinkingBudget
	case len(fields) == 1, fields[1] == "off":
	default:
		n, err := strconv.Atoi(fields[1])
		if err != nil || n < 1024 {
			return false, fmt.Errorf("/think %s: expected on, off or a budget of at least 1024 tokens", fields[1])
		}
		budget = n
	}
	r.Agent.SetThinking(budget)
	if budget == 0 {
		u.Printf("Extended thinking: off\n")
	} else {
		u.Printf("Extended thinking: on, %d tokens (Anthropic; reasoning effort %s for OpenAI-compatible models)\n", budget, providers.ReasoningEffort(budget))
	}
	return false, nil
}

// cmdExit leaves the chat.
func (r *REPL) cmdExit(line string, fields []string) (quit bool, err error) {
	return true, nil
}

package builtin

//go:generate go test -run ^TestInputSchemasGenerated$ -update .

import (
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
	"github.com/agent-mcp/agent-mcp/tools/lsp"
	"github.com/agent-mcp/agent-mcp/tools/search"
	"github.com/agent-mcp/agent-mcp/tools/shell"
	"github.com/agent-mcp/agent-mcp/tools/web"
	"github.com/agent-mcp/agent-mcp/tools/workflow"
)

// Options configure the built-in tools (backends, limits). The zero value
// gives every tool its defaults.
type Options struct {
	// SearXNGURL is the SearXNG instance WebSearch queries (enables it).
	SearXNGURL string
	// BraveAPIKey is the Brave Search API key WebSearch uses (enables it).
	BraveAPIKey string
	// WebAllowPrivate lets WebFetch reach loopback, private and link-local
	// addresses (off: no server-side request forgery through the tool).
	WebAllowPrivate bool
	// MaxBackgroundTasks caps the background tasks one session may have
	// running at once; 0 means shell.DefaultMaxBackgroundTasks.
	MaxBackgroundTasks int
	// MaxServerBackgroundTasks caps the background tasks running at once
	// across all the sessions of one server; 0 means
	// shell.DefaultMaxServerBackgroundTasks.
	MaxServerBackgroundTasks int
	// DisableBackground turns Bash's background tasks off
	// (shell.Options.DisableBackground).
	DisableBackground bool
	// Sandbox confines Bash's commands (nil: unconfined).
	Sandbox *sandbox.Sandbox
	// EnvAllow are the server's variables Bash's commands get beyond
	// those a shell and a build need (sandbox.env.allow).
	EnvAllow []string
	// Excluded are the commands that run outside the sandbox
	// (sandbox.excludedCommands).
	Excluded shell.ExcludedCommands
	// LSP is the language servers: diagnostics after Write, Edit and
	// MultiEdit, and the LSP tool (nil: neither).
	LSP *lsp.Service
	// ShellStats, if set, counts Bash's commands and background tasks
	// (the server's metrics read it).
	ShellStats *shell.Stats
}

// Tools returns every built-in tool, enabled or not; the orchestrator's
// pool assembly filters and sorts them.
func Tools(opts Options) []*tools.Tool {
	var fo fs.Options
	if opts.LSP != nil {
		fo.Diagnostics = opts.LSP
	}
	ts := []*tools.Tool{
		fs.Read(),
		fs.Write(fo),
		fs.Edit(fo),
		fs.MultiEdit(fo),
		fs.LS(),
		fs.NotebookEdit(fo),
		search.Glob(),
		search.Grep(),
		shell.Bash(shell.Options{DisableBackground: opts.DisableBackground, MaxBackgroundTasks: opts.MaxBackgroundTasks, MaxServerBackgroundTasks: opts.MaxServerBackgroundTasks,
			Sandbox: opts.Sandbox, Excluded: opts.Excluded, EnvAllow: opts.EnvAllow, Stats: opts.ShellStats}),
		shell.TaskOutput(),
		shell.TaskInput(),
		shell.TaskList(),
		shell.TaskStop(),
		workflow.TodoWrite(),
		web.WebFetch(web.FetchOptions{AllowPrivate: opts.WebAllowPrivate}),
		web.WebSearch(web.SearchOptions{SearXNGURL: opts.SearXNGURL, BraveAPIKey: opts.BraveAPIKey}),
		workflow.AskUserQuestion(),
		workflow.EnterPlanMode(),
		workflow.ExitPlanMode(),
		workflow.Agent(workflow.AgentOptions{}),
	}
	if t := lsp.Tool(opts.LSP); t != nil {
		ts = append(ts, t)
	}
	// Their schemas' JSON, generated at build time (schemas_gen.go).
	for _, t := range ts {
		if j := inputSchemaJSON(t.Name); j != "" {
			t.InputSchemaJSON = []byte(j)
		}
	}
	return ts
}

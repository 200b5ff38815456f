// Package builtin lists agent-mcp's built-in tools. Adding a tool is one
// line here plus the tool's own file, description and tests in its family
// package.
package builtin

import (
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
	"github.com/agent-mcp/agent-mcp/tools/search"
	"github.com/agent-mcp/agent-mcp/tools/workflow"
)

// Options configure the built-in tools (backends, limits). The zero value
// gives every tool its defaults.
type Options struct{}

// Tools returns every built-in tool, enabled or not; the orchestrator's
// pool assembly filters and sorts them.
func Tools(opts Options) []tools.Tool {
	return []tools.Tool{
		fs.Read(),
		fs.Write(),
		fs.Edit(),
		fs.MultiEdit(),
		fs.LS(),
		fs.NotebookEdit(),
		search.Glob(),
		search.Grep(),
		workflow.TodoWrite(),
	}
}

package fs

import "github.com/agent-mcp/agent-mcp/tools"

// Paths says NotebookEdit writes notebook_path (see tools.PathInput).
func (in *NotebookEditInput) Paths(*tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: in.NotebookPath, Write: true}}
}

package fs

import "github.com/agent-mcp/agent-mcp/tools"

// Paths says LS reads the directory path and everything below it (see
// tools.PathInput).
func (in *LSInput) Paths(*tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: in.Path}}
}

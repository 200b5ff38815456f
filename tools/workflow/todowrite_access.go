package workflow

import "github.com/agent-mcp/agent-mcp/tools"

// Paths says TodoWrite touches no file: it changes only the session's list
// (see tools.PathInput).
func (in *TodoWriteInput) Paths(*tools.UseContext) []tools.PathAccess { return nil }

package fs

import "github.com/agent-mcp/agent-mcp/tools"

// Paths says MultiEdit writes file_path (see tools.PathInput).
func (in *MultiEditInput) Paths(*tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: in.FilePath, Write: true}}
}

package fs

import "github.com/agent-mcp/agent-mcp/tools"

// Paths says Read reads file_path (see tools.PathInput).
func (in *ReadInput) Paths(*tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: in.FilePath}}
}

package fs

import "github.com/agent-mcp/agent-mcp/tools"

// Paths says Write writes file_path (see tools.PathInput).
func (in *WriteInput) Paths(*tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: in.FilePath, Write: true}}
}

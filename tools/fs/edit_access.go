package fs

import "github.com/agent-mcp/agent-mcp/tools"

// Paths says Edit writes file_path (see tools.PathInput).
func (in *EditInput) Paths(*tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: in.FilePath, Write: true}}
}

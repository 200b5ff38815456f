package search

import (
	"strings"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Paths says Grep reads path, a file or a directory with everything below
// it, or the current directory when path is left out (see
// tools.PathInput). The glob and type filters only narrow what is read
// below that path, so they add nothing.
func (in *GrepInput) Paths(uc *tools.UseContext) []tools.PathAccess {
	if strings.TrimSpace(in.Path) != "" {
		return []tools.PathAccess{{Path: in.Path}}
	}
	if uc != nil && uc.Session != nil {
		return []tools.PathAccess{{Path: uc.Dir()}}
	}
	return []tools.PathAccess{{Path: "."}}
}

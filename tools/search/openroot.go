package search

import (
	"fmt"
	"os"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/tools"
)

// openRoot opens the directory (or, for Grep, the file) a search starts
// from, the way Read opens a file (confine.OpenRead): through an
// os.Root of the working directory holding it, or, outside them, only
// where the permission check saw the path lead. The walk then opens
// everything below it relative to this descriptor, following no symbolic
// link, so no link swapped in after the check leads the search elsewhere.
func openRoot(uc *tools.UseContext, root string) (*os.File, error) {
	f, err := confine.OpenRead(uc.Session.WorkDirs(), uc.Resolved, root)
	if err != nil {
		return nil, fmt.Errorf("cannot search %s: %w", root, err)
	}
	return f, nil
}

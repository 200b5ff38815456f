package search

import (
	"strings"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Paths says Glob reads the directory it walks (see tools.PathInput): the
// fixed directory prefix of pattern joined with path (or the current
// directory), as runGlob computes it. So `/etc/**` reads /etc and
// `../other/*.go` reads ../other, whatever path says.
func (in *GlobInput) Paths(uc *tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: globRoot(in, uc)}}
}

// globRoot is the directory a Glob call walks. Without a session there is
// no current directory to resolve against and the result is relative; a
// leading "~" that came from the pattern (which Glob does not expand, unlike
// path) is then marked "./~" so it is not taken for the home directory.
func globRoot(in *GlobInput, uc *tools.UseContext) string {
	path := strings.TrimSpace(in.Path)
	if uc != nil && uc.Session != nil {
		base := uc.Dir()
		if path != "" {
			base = uc.Resolve(in.Path)
		}
		root, _, _ := splitGlob(base, in.Pattern)
		return root
	}
	base := "."
	if path != "" {
		base = in.Path
	}
	root, _, _ := splitGlob(base, in.Pattern)
	if (root == "~" || strings.HasPrefix(root, "~/")) && !(in.Path == "~" || strings.HasPrefix(in.Path, "~/")) {
		root = "./" + root
	}
	return root
}

package permissions

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// Anchors are the directories path specifiers are relative to (docs/tools.md §9):
// `//abs` is absolute, `~/p` is under Home, `/p` is under Root (the
// project the settings file belongs to), and `p` or `./p` is under Cwd.
type Anchors struct {
	Home, Root, Cwd string
}

// pathPattern is a compiled path specifier with gitignore semantics: `*`
// stays within a path component, `**` crosses them, a pattern with no
// slash but a trailing one matches at any depth, a trailing slash matches
// directories only, and a pattern that matches a directory matches
// everything inside it.
type pathPattern struct {
	base    string
	glob    string
	dirOnly bool
}

func compilePathPattern(spec string, a Anchors) (*pathPattern, error) {
	p := &pathPattern{}
	rest := spec
	anchored := true
	switch {
	case strings.HasPrefix(rest, "//"):
		p.base, rest = "/", strings.TrimLeft(rest, "/")
	case rest == "~" || strings.HasPrefix(rest, "~/"):
		p.base, rest = a.Home, strings.TrimPrefix(strings.TrimPrefix(rest, "~"), "/")
	case strings.HasPrefix(rest, "/"):
		p.base, rest = a.Root, strings.TrimLeft(rest, "/")
	case strings.HasPrefix(rest, "./"):
		p.base, rest = a.Cwd, strings.TrimPrefix(rest, "./")
	default:
		p.base = a.Cwd
		anchored = strings.Contains(strings.TrimSuffix(rest, "/"), "/")
	}
	if p.base == "" {
		return nil, fmt.Errorf("path pattern %q: its anchor directory is unknown", spec)
	}
	if strings.HasSuffix(rest, "/") {
		p.dirOnly = true
		rest = strings.TrimRight(rest, "/")
	}
	if rest == "" || rest == "." {
		rest = "**"
	}
	// Braces are literal in gitignore syntax.
	rest = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(rest)
	if !anchored {
		rest = "**/" + rest
	}
	if !doublestar.ValidatePattern(rest) {
		return nil, fmt.Errorf("path pattern %q is not a valid glob", spec)
	}
	p.base = filepath.Clean(p.base)
	p.glob = rest
	return p, nil
}

// match reports whether abs (an absolute, clean path) matches; isDir says
// whether abs itself is a directory.
func (p *pathPattern) match(abs string, isDir bool) bool {
	rel, err := filepath.Rel(p.base, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	if rel == "." {
		return p.glob == "**" && (isDir || !p.dirOnly)
	}
	rel = filepath.ToSlash(rel)
	if (!p.dirOnly || isDir) && globOK(p.glob, rel) {
		return true
	}
	for dir := pathDir(rel); dir != ""; dir = pathDir(dir) {
		if globOK(p.glob, dir) {
			return true
		}
	}
	return false
}

// mayMatchBelow reports whether the pattern may match dir or something
// below it (a recursive command over dir reaches it).
func (p *pathPattern) mayMatchBelow(dir string) bool {
	if confine.Inside(dir, p.base) {
		return true // the pattern's whole scope is below dir
	}
	rel, err := filepath.Rel(p.base, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	gsegs := strings.Split(p.glob, "/")
	for i, s := range strings.Split(filepath.ToSlash(rel), "/") {
		if i >= len(gsegs) || gsegs[i] == "**" {
			return true
		}
		if ok, err := path.Match(gsegs[i], s); err != nil || !ok {
			return false
		}
	}
	return true
}

func globOK(pattern, name string) bool {
	ok, err := doublestar.Match(pattern, name)
	return err == nil && ok
}

// pathDir is the parent of a slash-separated relative path, "" at the top.
func pathDir(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ""
	}
	return rel[:i]
}

// Package protect is the one predicate on protected names: whether writing
// a path needs an explicit allow rule because one of its components names a
// host's or a tool's configuration (.git, .claude, .vscode, .envrc,
// .mcp.json, ...). The lists themselves are the permission package's
// (permissions/protected.go); this package only judges a path against them,
// so that the Write and Edit tools (permissions.Protected) and the kernel
// sandbox's supervisor (sandbox/launcher, which receives the lists as facts
// in its plan) read one list and one rule. It imports nothing.
package protect

import (
	"path/filepath"
	"slices"
	"strings"
)

// Names are the protected names and places.
type Names struct {
	// Dirs are directories protected as a whole wherever they appear.
	Dirs []string `json:",omitempty"`
	// Files are file names protected wherever they appear.
	Files []string `json:",omitempty"`
	// ConfigDirs are directories protected under a `.config` directory.
	ConfigDirs []string `json:",omitempty"`
	// Places are absolute paths protected with everything beneath them
	// (where XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GOENV move the user's
	// configuration).
	Places []string `json:",omitempty"`
	// GitCode are the entries of a git directory that make git run code or
	// look elsewhere (config, hooks, commondir, ...; a path relative to a
	// git directory). [Names.Sandboxed] narrows a .git directory to them.
	GitCode []string `json:",omitempty"`
}

// Empty reports whether n names nothing.
func (n Names) Empty() bool {
	return len(n.Dirs)+len(n.Files)+len(n.ConfigDirs)+len(n.Places) == 0
}

// Protected reports whether writing path (absolute, or relative to a
// writable root) needs an explicit allow rule: it is inside one of
// [Names.Dirs] or a `.config/` one of [Names.ConfigDirs], beneath one of
// [Names.Places], or its last component is one of [Names.Files]. what
// names the protected part.
func (n Names) Protected(path string) (ok bool, what string) {
	p := filepath.Clean(path)
	if filepath.IsAbs(p) {
		for _, u := range n.Places {
			if p == u || strings.HasPrefix(p, u+"/") {
				return true, u
			}
		}
	}
	parts := strings.Split(filepath.ToSlash(p), "/")
	for i, c := range parts {
		if slices.Contains(n.Dirs, c) {
			return true, c + "/"
		}
		if c == ".config" && i+1 < len(parts) && slices.Contains(n.ConfigDirs, parts[i+1]) {
			return true, ".config/" + parts[i+1] + "/"
		}
	}
	if base := parts[len(parts)-1]; slices.Contains(n.Files, base) {
		return true, base
	}
	return false, ""
}

// gitData are the parts of a git directory that only hold data git reads
// as data (objects, refs and their logs): a name there is never code, even
// one spelled like a code path (a branch called config).
var gitData = []string{"objects", "refs", "logs"}

// Sandboxed is [Names.Protected] as the kernel sandbox applies it to rel, a
// path relative to a writable root, with abs its absolute spelling (for
// [Names.Places]): a .git directory is narrowed to what makes git run code
// ([Names.GitCode], at any depth of it: a submodule's or a worktree's git
// directory inside it too), so that git can still commit. gitAt is the index
// in rel's components of the .git directory a verdict rests on, -1 when
// none: the caller may let a command write the code paths of a repository
// it made itself. A .git entry itself is protected (gitAt -1): a command
// may make one only as a directory, which the caller decides.
func (n Names) Sandboxed(rel, abs string) (ok bool, what string, gitAt int) {
	gitAt = -1
	if abs != "" {
		for _, u := range n.Places {
			if p := filepath.Clean(abs); p == u || strings.HasPrefix(p, u+"/") {
				return true, u, -1
			}
		}
	}
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	for i, c := range parts {
		if c == ".git" && slices.Contains(n.Dirs, c) {
			if i == len(parts)-1 {
				return true, ".git", -1
			}
			if code := gitCodeIn(n.GitCode, parts[i+1:]); code != "" {
				return true, ".git/" + code, i
			}
			// A git directory's data: still judged for the other names
			// (a .claude inside .git is as protected as anywhere).
			continue
		}
		if slices.Contains(n.Dirs, c) {
			return true, c + "/", -1
		}
		if c == ".config" && i+1 < len(parts) && slices.Contains(n.ConfigDirs, parts[i+1]) {
			return true, ".config/" + parts[i+1] + "/", -1
		}
	}
	if base := parts[len(parts)-1]; slices.Contains(n.Files, base) {
		return true, base, -1
	}
	return false, "", -1
}

// OnTheWay reports whether rel (a path relative to a writable root, abs
// its absolute spelling) names a directory on the way to a protected path
// without being protected itself: a `.config` (where .config/git lies), a
// git directory's `info` (info/attributes), an ancestor of one of
// [Names.Places]. The kernel sandbox lets a command make a directory there
// and nothing else: a link, or a directory renamed into place, would lead
// the user's tools to a protected name whose content the command chose.
func (n Names) OnTheWay(rel, abs string) (ok bool, what string) {
	if abs != "" {
		for _, u := range n.Places {
			if strings.HasPrefix(u, filepath.Clean(abs)+"/") {
				return true, u
			}
		}
	}
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	last := parts[len(parts)-1]
	if last == ".config" && len(n.ConfigDirs) > 0 {
		return true, ".config/"
	}
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] != ".git" {
			continue
		}
		for _, c := range n.GitCode {
			if first, _, multi := strings.Cut(c, "/"); multi && first == last {
				return true, ".git/" + c
			}
		}
		break
	}
	return false, ""
}

// gitCodeIn returns the code path of code found in rest, the components
// after a .git, at any depth (modules/x/config, worktrees/w/commondir), or
// "" when rest holds none or lies in git's data (objects, refs, logs).
func gitCodeIn(code, rest []string) string {
	for i := range rest {
		if slices.Contains(gitData, rest[i]) && (i == 0 || i >= 2 && (rest[i-2] == "modules" || rest[i-2] == "worktrees")) {
			return "" // objects, refs, logs of this git directory or a nested one
		}
		for _, c := range code {
			cs := strings.Split(c, "/")
			if i+len(cs) <= len(rest) && slices.Equal(rest[i:i+len(cs)], cs) {
				// A code path is the entry itself or what is beneath it.
				return strings.Join(rest[:i+len(cs)], "/")
			}
		}
	}
	return ""
}

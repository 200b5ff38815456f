package permissions

import (
	"path/filepath"
	"slices"
)

// gitCodePaths are the parts of a .git directory that make git run code or
// change what it runs (hooks, and config with its aliases, filters and
// core.hooksPath). A sandbox keeps these read-only; the rest of .git
// (objects, refs, the index) stays writable so that git works.
var gitCodePaths = []string{"hooks", "config"}

// SandboxReadOnlyPaths is [ProtectedPaths] as a kernel sandbox applies it:
// every protected path directly under roots and home, except that a .git
// directory is narrowed to its hooks and config, which a command cannot
// change while git itself can still commit.
func SandboxReadOnlyPaths(roots []string, home string) []string {
	var out []string
	for _, p := range ProtectedPaths(roots, home) {
		if filepath.Base(p) != ".git" {
			out = append(out, p)
			continue
		}
		for _, c := range gitCodePaths {
			if q := filepath.Join(p, c); !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}

// PathPattern returns the directory a Read or Edit rule's path specifier
// is anchored at and the gitignore-style glob beneath it ("**" for all of
// it); ok is false for a rule without a path pattern.
func (r *SourcedRule) PathPattern() (base, glob string, ok bool) {
	if r == nil || r.path == nil {
		return "", "", false
	}
	return r.path.base, r.path.glob, true
}

package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Git runs what its repository's files say, outside the sandbox, the next
// time the user runs git there: core.fsmonitor, core.hooksPath, aliases,
// filters, hooks, in the config, the worktree config, the config a
// commondir points to, and in every submodule's and linked worktree's git
// directory. Each command's start finds the repositories inside the
// writable roots (a bounded scan: nested ones, a linked worktree's or a
// submodule's .git file and the git directory it names, the modules and
// worktrees a git directory holds) and protects, in each git directory,
// what makes git run code or look elsewhere; the rest (objects, refs,
// logs, the index, HEAD and the lock files git makes beside them) stays
// writable, so that git can commit, fetch and check out. The .git entry
// itself is an ancestor of these paths and so is pinned (pinned.go).

// gitCodeNames are the entries of a git directory kept from commands: read-only where
// they exist, moved aside when a command creates them (pinned.go).
var gitCodeNames = []string{"config", "config.worktree", "hooks", "commondir", "info/attributes"}

// Scan bounds, per writable root.
const (
	gitScanDepth   = 6
	gitScanEntries = 10_000
)

// gitPaths lists the protected paths of every repository found inside
// roots: each git directory's gitCodeNames, and each .git file (which
// names the git directory).
func gitPaths(roots []string) []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, r := range roots {
		for _, g := range findGitEntries(r) {
			st, err := os.Lstat(g)
			if err != nil {
				continue
			}
			dir := g
			if st.Mode().IsRegular() {
				add(g) // the .git file: where it points must not change
				if dir = gitDirOf(g); dir == "" {
					continue
				}
			} else if !st.IsDir() {
				continue
			}
			for _, d := range gitDirs(dir) {
				for _, n := range gitCodeNames {
					add(filepath.Join(d, n))
				}
			}
		}
	}
	return out
}

// findGitEntries walks root breadth first, within the bounds, and lists
// the .git entries (directories or files) it finds, never following a
// link and never descending into a .git directory.
func findGitEntries(root string) []string {
	var found []string
	level := []string{root}
	seen := 0
	for depth := 0; depth <= gitScanDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if seen++; seen > gitScanEntries {
					return found
				}
				p := filepath.Join(dir, e.Name())
				if e.Name() == ".git" {
					found = append(found, p)
					continue
				}
				if e.IsDir() && e.Type()&os.ModeSymlink == 0 {
					next = append(next, p)
				}
			}
		}
		level = next
	}
	return found
}

// gitDirOf reads a .git file's "gitdir: PATH" (relative to the file's
// directory); empty when it is not one.
func gitDirOf(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(file), dir)
	}
	return filepath.Clean(dir)
}

// gitDirs is dir and the git directories it holds: modules/* (submodules,
// nested at any depth) and worktrees/* (linked worktrees), boundedly.
func gitDirs(dir string) []string {
	out := []string{dir}
	for i := 0; i < len(out) && len(out) < 200; i++ {
		for _, sub := range []string{"modules", "worktrees"} {
			entries, err := os.ReadDir(filepath.Join(out[i], sub))
			if err != nil {
				continue
			}
			for _, e := range entries {
				if e.IsDir() {
					out = append(out, filepath.Join(out[i], sub, e.Name()))
				}
			}
		}
	}
	return out
}

// isGitDirEntry reports whether p is a .git directory: it is protected by
// its parts (gitCodeNames), not as a whole, so that git can commit.
func isGitDirEntry(p string) bool {
	if filepath.Base(p) != ".git" {
		return false
	}
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}

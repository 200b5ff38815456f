package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
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

// repos is what a scan of the writable roots found: the .git entries
// (directories, files, links) and the git directories they lead to, with
// the modules and worktrees each holds.
type repos struct {
	entries, dirs []string
}

// dirState is what a scan saw of one directory: its inode and
// modification time (a name made, removed or renamed in it changes
// them) and its subdirectories, so that a later scan reads again only the
// directories that changed (rescanRepos).
type dirState struct {
	ino     uint64
	mtime   time.Time
	subdirs []string
}

// scanRepos finds the repositories inside roots (findGitEntries); seen,
// when not nil, records each directory read.
func scanRepos(roots []string, seen map[string]dirState) repos {
	var entries []string
	for _, root := range roots {
		entries = append(entries, findGitEntries(root, seen)...)
	}
	return reposOf(entries)
}

// reposOf follows .git entries to their git directories.
func reposOf(entries []string) repos {
	r := repos{entries: entries}
	for _, g := range entries {
		st, err := os.Lstat(g)
		if err != nil {
			continue
		}
		dir := g
		if st.Mode().IsRegular() {
			if dir = gitDirOf(g); dir == "" {
				continue
			}
		} else if !st.IsDir() {
			continue
		}
		for _, d := range gitDirs(dir) {
			if !slices.Contains(r.dirs, d) {
				r.dirs = append(r.dirs, d)
			}
		}
	}
	return r
}

// paths lists the protected paths of the repositories: each git
// directory's gitCodeNames, and each .git file (which names the git
// directory).
func (r repos) paths() []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, g := range r.entries {
		if st, err := os.Lstat(g); err == nil && st.Mode().IsRegular() {
			add(g) // the .git file: where it points must not change
		}
	}
	for _, d := range r.dirs {
		for _, n := range gitCodeNames {
			add(filepath.Join(d, n))
		}
	}
	return out
}

// repoMemory holds every .git entry the scans have found. The scan is
// bounded, so a command could make it stop early (ten thousand files made
// ahead of the rest in its breadth-first order) and take a repository it
// protected before out of the next command's protection; one found once
// stays found for as long as the server runs.
type repoMemory struct {
	mu    sync.Mutex
	found map[string]bool
	// indexes are the gitlinks of the index files read (gitindex.go).
	indexes map[string]indexLinks
}

// recall records entries and returns the remembered ones inside roots
// that still exist and are not among them.
func (m *repoMemory) recall(entries, roots []string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.found == nil {
		m.found = map[string]bool{}
	}
	for _, e := range entries {
		m.found[e] = true
	}
	var more []string
	for e := range m.found {
		if slices.Contains(entries, e) || !within(e, roots) {
			continue
		}
		if _, err := os.Lstat(e); err == nil {
			more = append(more, e)
		}
	}
	slices.Sort(more)
	return more
}

// newRepoPaths lists what, in a scan made as commands run, belongs to a
// repository the scan at the clean point did not find (known holds what
// it found): a .git file or link (it points git at a directory the
// command chose), and the gitCodeNames of a git directory. A repository
// a command makes is not its own: the user's git reaches it from the
// workspace's repository (a gitlink in the index or a commit: git status
// runs git inside it) and an excluded git runs in it, so what in it
// makes git run code is moved aside like a protected name the command
// created (only what changed since the clean point: a repository the
// user had, found now and not then, keeps what they made).
func newRepoPaths(now repos, known map[string]bool) []string {
	var out []string
	for _, g := range now.entries {
		if known[g] {
			continue
		}
		if st, err := os.Lstat(g); err == nil && !st.IsDir() {
			out = append(out, g)
		}
	}
	for _, d := range now.dirs {
		if known[d] {
			continue
		}
		for _, n := range gitCodeNames {
			out = append(out, filepath.Join(d, n))
		}
	}
	return out
}

// findGitEntries walks root breadth first, within the bounds, and lists
// the .git entries (directories or files) it finds, never following a
// link and never descending into a .git directory; seen, when not nil,
// records each directory read.
func findGitEntries(root string, seen map[string]dirState) []string {
	var found []string
	level := []string{root}
	count := 0
	for depth := 0; depth <= gitScanDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			st, entries, err := readDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if count++; count > gitScanEntries {
					return found
				}
				p := filepath.Join(dir, e.Name())
				if e.Name() == ".git" {
					found = append(found, p)
					continue
				}
				if e.IsDir() && e.Type()&os.ModeSymlink == 0 {
					next = append(next, p)
					st.subdirs = append(st.subdirs, p)
				}
			}
			if seen != nil {
				seen[dir] = st
			}
		}
		level = next
	}
	return found
}

// rescanRepos finds the .git entries that may be new since the scan that
// recorded seen: it reads again only the directories whose inode or
// modification time changed, or that were changed too near that scan for
// the file system's coarse clock to tell (a modification time from since
// on), and the new directories beneath them, within the same bounds; an
// unchanged directory costs one lstat. Entries of unchanged directories
// are not listed (they were found then).
func rescanRepos(roots []string, seen map[string]dirState, since time.Time) []string {
	var found []string
	count := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > gitScanDepth || count > gitScanEntries {
			return
		}
		if old, ok := seen[dir]; ok && old.mtime.Before(since) {
			if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && fi.ModTime().Equal(old.mtime) && inode(fi) == old.ino {
				for _, sd := range old.subdirs {
					walk(sd, depth+1)
				}
				return
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if count++; count > gitScanEntries {
				return
			}
			p := filepath.Join(dir, e.Name())
			if e.Name() == ".git" {
				found = append(found, p)
				continue
			}
			if e.IsDir() && e.Type()&os.ModeSymlink == 0 {
				walk(p, depth+1)
			}
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return found
}

// readDir reads dir's entries and its own state.
func readDir(dir string) (dirState, []os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return dirState{}, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return dirState{}, nil, err
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return dirState{}, nil, err
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return dirState{ino: inode(fi), mtime: fi.ModTime()}, entries, nil
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

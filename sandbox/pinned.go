package sandbox

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Protected names that do not exist yet. The namespaces layer binds an
// existing protected path read-only, but a bind needs something to bind
// onto: a name that is absent when a command starts (.mcp.json,
// .envrc, .vscode/, .git/hooks, ~/.claude/settings.json in a home
// that is a working directory) could be created by the command. Making
// a placeholder on disk for each would litter every working directory
// the user looks at (git status would list them) and, removed at the
// end, would unbind another command's placeholder. So this is the one
// protection checked after the fact: the server notes the protected
// names absent when a command starts, and when any sandboxed command
// ends (and before the next starts) it moves whatever appeared under
// them aside, to NAME.sandbox-refused, where no tool reads it, and says
// so in the result. It holds with either layer. Where the launcher's
// supervisor of creating calls runs (fileguard.go), the names the
// protected-name predicate judges are refused when made instead, and are
// left out of the guard, so that what the user makes meanwhile stays
// theirs.

// absentGuard tracks the protected names known to be absent.
type absentGuard struct {
	mu      sync.Mutex
	running int             // sandboxed commands whose init is running
	absent  map[string]bool // protected paths absent when last known clean
	// stuck are names a sweep found but could not move aside: they are
	// kept guarded (and tried again) past the next clean point, so that a
	// failed move never makes a command's name the user's.
	stuck map[string]bool
	// roots are the real paths of the running commands' writable roots:
	// the server acts only inside them; given are the roots as given.
	roots, given []string
	// w watches the ways to the absent names while a command runs
	// (watch_linux.go).
	w *watcher
	// known are the .git entries and git directories found at the clean
	// point and as commands started; gitRoots the roots scanned again at
	// each sweep for repositories a command made (git.go).
	known        map[string]bool
	knownEntries []string
	gitRoots     []string
	seen         map[string]dirState // the directories the clean point's scan read
	// gitDirs are the git directories the last scan or sweep found: a
	// running command's write of an index there (a gitlink staged) is
	// watched (watch_linux.go), since the user's git status enters the
	// repository it names.
	gitDirs []string
	// memory is the sandbox's: the repositories' indexes, read again
	// only when changed, name the submodules a sweep must find too.
	memory *repoMemory
	// since is the clean point: a link on a protected name's path changed
	// after it (ctime) was put there by a command and is not followed.
	since   time.Time
	pending []string // what was moved aside, not yet reported
}

// linkSlack is how far before the clean point a link's ctime may lie and
// the link still count as new: file system times come from a coarse
// clock that can lag the clock the clean point is read from.
const linkSlack = 100 * time.Millisecond

// pinnedPaths are the protected paths of the writable roots and home
// ([Options.Protected]) with the repositories found in the roots, and the
// configured Pinned paths (agent-mcp's and Claude Code's user
// configuration), which must never be created or changed by a command.
func (s *Sandbox) pinnedPaths(roots []string, seen map[string]dirState) ([]string, repos) {
	var paths []string
	if s.opts.Protected != nil {
		paths = slices.Clone(s.opts.Protected(roots))
	}
	found := scanRepos(roots, seen)
	// The repositories the indexes name are found however far the
	// bounded scan got: the user's git status enters each.
	all := s.repos.withGitlinks(found.entries, roots)
	if more := s.repos.recall(all, roots); len(more) > 0 || len(all) > len(found.entries) {
		found = reposOf(s.repos.withGitlinks(append(all, more...), roots))
	}
	for _, p := range found.paths() {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	for _, r := range roots {
		// A .git a command makes where there was none: a directory is a
		// repository of its own (its config and hooks are guarded as
		// above); a file would point git at a directory the command
		// chose, so it is moved aside.
		if p := filepath.Join(r, ".git"); !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	for _, p := range s.opts.Pinned {
		if p != "" && !slices.Contains(paths, filepath.Clean(p)) {
			paths = append(paths, filepath.Clean(p))
		}
	}
	return paths, found
}

// begin is called as a sandboxed command starts, with the protected
// paths inside its writable roots, those roots, and the roots scanned for
// repositories with what the scan found (seen: the directories it read).
// With no other
// sandboxed command running the disk is what the user made it, and the
// absent names are taken from it; else what appeared since the last
// clean point was made by a running command and is moved aside first.
func (g *absentGuard) begin(paths, roots, gitRoots []string, found repos, seen map[string]dirState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running == 0 {
		g.absent = map[string]bool{}
		g.roots, g.given = nil, nil
		g.known = map[string]bool{}
		g.knownEntries = nil
		g.gitRoots = nil
		g.gitDirs = nil
		g.seen = seen
		g.since = time.Now().Add(-linkSlack)
		for p := range g.stuck {
			g.absent[p] = true
		}
	}
	for _, r := range roots {
		if real, err := filepath.EvalSymlinks(r); err == nil && !slices.Contains(g.roots, real) {
			g.roots = append(g.roots, real)
		}
		if r = filepath.Clean(r); !slices.Contains(g.given, r) {
			g.given = append(g.given, r)
		}
	}
	if g.running > 0 || len(g.stuck) > 0 {
		g.sweepLocked()
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			g.absent[p] = true
		}
	}
	if g.running == 0 {
		// Known are only what the clean point's scan found: a repository
		// found as a later command starts may be a running command's.
		for _, p := range append(slices.Clone(found.entries), found.dirs...) {
			g.known[p] = true
		}
		g.knownEntries = found.entries
		g.gitDirs = found.dirs
	}
	for _, r := range gitRoots {
		if !slices.Contains(g.gitRoots, r) {
			g.gitRoots = append(g.gitRoots, r)
		}
	}
	g.watchLocked()
	g.running++
}

// sweep moves aside what appeared under the absent names (a command's
// shell ended, or its init); done, when true, ends one command.
func (g *absentGuard) sweep(done bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweepLocked()
	if done && g.running > 0 {
		if g.running--; g.running == 0 {
			g.unwatchLocked()
		}
	}
}

// sweepIfRunning sweeps while a sandboxed command runs: before a command
// runs outside the sandbox (an excluded one), which must not find what a
// background task planted. With none running, what exists is the user's.
func (g *absentGuard) sweepIfRunning() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running > 0 {
		g.sweepLocked()
	}
}

// report returns what was moved aside since the last report.
func (g *absentGuard) report() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.pending
	g.pending = nil
	return out
}

// sweepLocked moves aside each absent name that now exists, and each new
// link put on the way to one, acting only through descriptors opened
// without following links and only inside the writable roots (revert).
func (g *absentGuard) sweepLocked() {
	names := make([]string, 0, len(g.absent))
	for p := range g.absent {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		msg, failed := revert(p, g.roots, g.since, false)
		if msg != "" {
			g.pending = append(g.pending, msg)
		}
		if failed {
			if g.stuck == nil {
				g.stuck = map[string]bool{}
			}
			g.stuck[p] = true
		} else {
			delete(g.stuck, p)
		}
	}
	if len(g.gitRoots) == 0 {
		return
	}
	// Repositories a command made (git.go): what in them changed since
	// the clean point.
	entries := append(rescanRepos(g.gitRoots, g.seen, g.since), g.knownEntries...)
	if g.memory != nil {
		// A repository a command made beyond the scan's bounds is found
		// through the index that names it as a submodule.
		entries = g.memory.withGitlinks(entries, g.gitRoots)
	}
	now := reposOf(entries)
	g.gitDirs = now.dirs
	for _, p := range newRepoPaths(now, g.known) {
		if msg, _ := revert(p, g.roots, g.since, true); msg != "" {
			g.pending = append(g.pending, msg)
		}
	}
}

// asideName is the n-th name p's entry is moved aside to: NAME.sandbox-refused,
// then -1, -2, ..., and past asideNumbered a random suffix (a command
// may have taken all the numbered ones).
func asideName(name string, n int) string {
	switch {
	case n == 0:
		return name + ".sandbox-refused"
	case n < asideNumbered:
		return fmt.Sprintf("%s.sandbox-refused-%d", name, n)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s.sandbox-refused-%x", name, b)
}

// asideNumbered and asideTries bound the names tried.
const (
	asideNumbered = 100
	asideTries    = asideNumbered + 20
)

// ancestorsWithin lists, for each of paths, its ancestors strictly inside
// the writable root that holds it (shallowest first, no repeats): the
// namespaces layer binds each onto itself, and a mount point cannot be
// renamed, so a rename cannot carry a read-only bind or a mask away to a
// name the next command's rules do not cover.
func ancestorsWithin(paths, roots []string) []string {
	var out []string
	for _, p := range paths {
		root := ""
		for _, r := range roots {
			if within(p, []string{r}) && len(r) > len(root) {
				root = filepath.Clean(r)
			}
		}
		if root == "" || p == root {
			continue
		}
		var chain []string
		for d := filepath.Dir(p); d != root && within(d, []string{root}); d = filepath.Dir(d) {
			chain = append(chain, d)
		}
		slices.Reverse(chain)
		for _, d := range chain {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

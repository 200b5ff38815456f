package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agent-mcp/agent-mcp/permissions"
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
// so in the result. It holds with either layer.

// absentGuard tracks the protected names known to be absent.
type absentGuard struct {
	mu      sync.Mutex
	running int             // sandboxed commands whose init is running
	absent  map[string]bool // protected paths absent when last known clean
	pending []string        // what was moved aside, not yet reported
}

// pinnedPaths are the protected paths of the writable roots and home,
// and the configured Pinned paths (agent-mcp's and Claude Code's user
// configuration), which must never be created or changed by a command.
func (s *Sandbox) pinnedPaths(roots []string) []string {
	paths := permissions.SandboxReadOnlyPaths(roots, s.cfg.Home)
	for _, p := range gitPaths(roots) {
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
	for _, p := range s.cfg.Pinned {
		if p != "" && !slices.Contains(paths, filepath.Clean(p)) {
			paths = append(paths, filepath.Clean(p))
		}
	}
	return paths
}

// begin is called as a sandboxed command starts, with the protected
// paths inside its writable roots. With no other sandboxed command
// running the disk is what the user made it, and the absent names are
// taken from it; else what appeared since the last clean point was made
// by a running command and is moved aside first.
func (g *absentGuard) begin(paths []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running == 0 {
		g.absent = map[string]bool{}
	} else {
		g.sweepLocked()
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			g.absent[p] = true
		}
	}
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
		g.running--
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

// sweepLocked moves aside each absent name that now exists.
func (g *absentGuard) sweepLocked() {
	var names []string
	for p := range g.absent {
		st, err := os.Lstat(p)
		if err != nil || filepath.Base(p) == ".git" && st.IsDir() {
			// A new .git directory is a new repository: its config
			// and hooks are guarded by name.
			continue
		}
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		g.pending = append(g.pending, moveAside(p))
	}
}

// moveAside renames p to an unused p.sandbox-refused[-N] in the same
// directory (a rename moves a link, never what it points to), and says
// what it did.
func moveAside(p string) string {
	for i := 0; i < 100; i++ {
		dst := p + ".sandbox-refused"
		if i > 0 {
			dst = fmt.Sprintf("%s-%d", dst, i)
		}
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.Rename(p, dst); err != nil {
			return fmt.Sprintf("%s, a protected name, was created by a sandboxed command and could not be moved aside: %v", p, err)
		}
		return fmt.Sprintf("%s, a protected name, was created by a sandboxed command: moved aside to %s", p, dst)
	}
	return fmt.Sprintf("%s, a protected name, was created by a sandboxed command; no free name to move it aside to", p)
}

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

package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/internal/protect"
	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// Protected names at any depth. Where the kernel offers seccomp user
// notification with SECCOMP_IOCTL_NOTIF_ADDFD (and the architecture has a
// filter), each command's creating calls go to a supervisor in its
// launcher (launcher/fsguard_linux.go), which refuses the ones that would
// create or change a protected name ([Options.ProtectedNames], judged by
// the Write and Edit tools' predicate, with a git directory narrowed to
// what runs code) anywhere beneath a writable root, and performs the
// others itself. The name is then never made: the server's after-the-fact
// guard (pinned.go) no longer moves aside, for that command, the names the
// predicate judges, so that nothing the user makes outside the sandbox
// meanwhile is touched. What the predicate does not judge (the paths of
// repositories a command made itself, the configured pinned paths that
// are no protected name) the guard keeps.
//
// In the supervised egress mode (Landlock alone with the network through
// the proxy) the command's one listener is the launcher's too: its
// supervisor forwards the socket calls to the server's
// (supervise_linux.go).

// FileGuard reports whether the supervisor of creating calls holds this
// sandbox's commands (protected names refused when made, at any depth), and
// why not.
func (s *Sandbox) FileGuard() (bool, string) {
	if s == nil || !s.Layers().Any() {
		return false, "no sandbox"
	}
	return s.fileGuard()
}

// fileGuard reports whether the supervisor of creating calls holds
// commands, and why not.
func (s *Sandbox) fileGuard() (bool, string) {
	switch {
	case s.opts.ProtectedNames.Empty():
		return false, "no protected names given"
	case s.fileGuardErr != nil:
		return false, s.fileGuardErr.Error()
	}
	return true, ""
}

// planGuard gives the plan the supervisor of creating calls where it can
// run, and returns the guarded names the server must still watch: those
// the supervisor does not judge.
func (s *Sandbox) planGuard(p *launcher.Plan, w workspace, guarded []string) []string {
	if ok, _ := s.fileGuard(); !ok {
		return guarded
	}
	names := s.opts.ProtectedNames
	names.GitCode = gitCodeNames
	g := &launcher.Guard{Names: names}
	for _, r := range w.roots {
		if real, err := filepath.EvalSymlinks(r); err == nil && !slices.Contains(g.Roots, real) {
			g.Roots = append(g.Roots, real)
		}
	}
	p.Guard = g
	var left []string
	for _, path := range guarded {
		if !judged(names, w.roots, path) {
			left = append(left, path)
		}
	}
	return left
}

// judged reports whether the supervisor refuses making path: it is
// protected by names beneath one of roots.
func judged(names protect.Names, roots []string, path string) bool {
	for _, r := range roots {
		r = filepath.Clean(r)
		if path != r && !strings.HasPrefix(path, r+"/") {
			continue
		}
		rel, err := filepath.Rel(r, path)
		if err != nil {
			continue
		}
		if ok, _, _ := names.Sandboxed(rel, path); ok {
			return true
		}
	}
	return false
}

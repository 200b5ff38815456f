package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// planHome makes the home private in plan p where [Options.HomeReadable]
// asks for it: the launcher hides the home (namespaces) or grants reads
// only beside it (Landlock alone), keeping the command's working
// directories, its writable paths and state directory, and the readable
// paths the caller named. A home that is a working directory or lies
// inside a writable path stays readable: the credential masks hold it.
func (s *Sandbox) planHome(p *launcher.Plan, spec Spec, w workspace, creds *sessionCreds) {
	home := s.home()
	if home == "" {
		return
	}
	own := append(append([]string{spec.Dir, spec.StateDir}, spec.WorkDirs...), w.writable...)
	for i, d := range own {
		if d == "" {
			continue
		}
		own[i] = resolved(d)
		if within(home, []string{own[i]}) {
			return
		}
	}
	p.Home = home
	for _, k := range append(own, s.homeReadable...) {
		if k != "" && strings.HasPrefix(k, home+"/") {
			p.HomeKept = append(p.HomeKept, k)
		}
	}
	if !s.layers.Namespaces {
		// The walk beside the home is the session's, not the command's.
		p.HomeBeside = s.beside.get(home)
		// Landlock alone masks nothing: what is hidden inside a kept
		// place (a credential path, a denyRead one) is granted around.
		var hidden []string
		if len(p.HomeKept) > 0 {
			hidden = append(expand(s.opts.ReadDeny), s.credentialMasks(spec.StateDir, creds, p.HomeKept...)...)
		}
		for _, h := range existing(hidden) {
			if h = filepath.Clean(h); within(h, p.HomeKept) {
				p.HomeHidden = append(p.HomeHidden, h)
			}
		}
	}
}

// home is the private home, symbolic links resolved; empty when the home
// is not private.
func (s *Sandbox) home() string {
	s.homeOnce.Do(func() {
		if s.opts.HomeReadable == nil || s.opts.Home == "" {
			return
		}
		h := resolved(s.opts.Home)
		if h == "/" || !filepath.IsAbs(h) {
			return
		}
		s.homePath = h
		readable := slices.Clone(s.opts.HomeReadable)
		// agent-mcp's own binary runs inside the sandbox too (the go
		// command's GOCACHEPROG, caches.go), wherever it is installed.
		if exe, err := os.Executable(); err == nil {
			readable = append(readable, exe)
		}
		if l := s.opts.Launcher; l != "" && l != "/proc/self/exe" {
			readable = append(readable, l)
		}
		for _, r := range readable {
			r = filepath.Clean(r)
			s.homeReadable = append(s.homeReadable, r)
			// A path spelled through a link is kept under both names.
			if rr := resolved(r); rr != r {
				s.homeReadable = append(s.homeReadable, rr)
			}
		}
	})
	return s.homePath
}

// PrivateHome is the home directory a confined command cannot read but
// for the paths kept ([Options.HomeReadable]); empty when the home is
// readable or nothing is confined.
func (s *Sandbox) PrivateHome() string {
	if s == nil || !s.Confines() {
		return ""
	}
	return s.home()
}

// resolved is path with its symbolic links resolved, or path cleaned
// where it does not exist.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// PrivateHomeNotes are the lines that tell, for a command's output, which
// refused reads were of paths under the private home: one line a path for
// each line of out that says "Permission denied" or "No such file or
// directory" and names a path under the home that the command could not
// reach (not under workDirs, the writable paths or the paths kept), at
// most max of them. None when the home is not private.
func (s *Sandbox) PrivateHomeNotes(out string, workDirs []string, max int) []string {
	if s == nil || !s.Confines() || s.home() == "" {
		return nil
	}
	home := filepath.Clean(s.opts.Home)
	reach := append(append(slices.Clone(s.homeReadable), workDirs...), s.opts.Writable...)
	for _, d := range append(slices.Clone(workDirs), s.opts.Writable...) {
		reach = append(reach, resolved(d))
	}
	var notes []string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "Permission denied") && !strings.Contains(line, "No such file or directory") {
			continue
		}
		for _, h := range []string{home, s.homePath} {
			path := pathAfter(line, h)
			if path == "" || seen[path] || within(path, reach) {
				continue
			}
			seen[path] = true
			if len(notes) < max {
				notes = append(notes, "agent-mcp: "+path+" is private to the sandbox; allow it with sandbox.filesystem.allowRead")
			}
		}
	}
	return notes
}

// pathAfter is the first path in line that begins with home followed by
// a slash, up to a quote, colon, space or closing bracket; empty when
// there is none.
func pathAfter(line, home string) string {
	i := strings.Index(line, home+"/")
	if i < 0 {
		return ""
	}
	rest := line[i:]
	if j := strings.IndexAny(rest, "'\"`: )]\t"); j >= 0 {
		rest = rest[:j]
	}
	return filepath.Clean(rest)
}

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// credentialMasks lists what the namespaces layer masks for one command:
// the credential paths ([Options.Credentials], the caller's one list) that
// exist, other sessions' state directories beside stateDir included. A
// credential path a Read allow rule names is left readable: wholly when
// the rule covers all of it (`Read(~/.ssh/**)`), else all of it but the
// entries the rule matches (`Read(~/.ssh/known_hosts)` leaves that file).
//
// With under set, only the paths within one of under are looked at (the
// others are not even looked for). creds adds the session's denied
// credential files and leaves its masked ones to their copies.
func (s *Sandbox) credentialMasks(stateDir string, creds *sessionCreds, under ...string) []string {
	var list []string
	if s.opts.Credentials != nil {
		list = s.opts.Credentials(stateDir)
	}
	// A masked file's copy is bound over it: what holds it is left to
	// show it, the rest of the directory masked as ever.
	allow := slices.Clone(s.opts.ReadAllow)
	if creds != nil {
		list = append(list, creds.denied...)
		for path := range creds.overlays {
			allow = append(allow, Pattern{Base: filepath.Dir(path), Glob: filepath.Base(path)})
		}
	}
	var out []string
	for _, c := range list {
		if under != nil && !within(filepath.Clean(c), under) {
			continue
		}
		st, err := os.Lstat(c)
		if err != nil {
			continue
		}
		var named []Pattern
		for _, p := range allow {
			if lit := literalPart(p); lit == c || strings.HasPrefix(lit, c+"/") {
				named = append(named, p)
			}
		}
		whole := matchesAny(named, c)
		switch {
		case whole:
		case len(named) == 0 || !st.IsDir():
			out = append(out, c)
		default:
			entries, _ := os.ReadDir(c)
			for _, e := range entries {
				if p := filepath.Join(c, e.Name()); !matchesAny(named, p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// literalPart is the pattern's base joined with the glob's leading
// components that hold no wildcard.
func literalPart(p Pattern) string {
	dir := p.Base
	for _, seg := range strings.Split(p.Glob, "/") {
		if seg == "" || seg == "**" || strings.ContainsAny(seg, `*?[\{`) {
			break
		}
		dir = filepath.Join(dir, seg)
	}
	return filepath.Clean(dir)
}

// matchesAny reports whether one of pats matches abs.
func matchesAny(pats []Pattern, abs string) bool {
	for _, p := range pats {
		rel, err := filepath.Rel(p.Base, abs)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if ok, _ := doublestar.Match(p.Glob, filepath.ToSlash(rel)); ok {
			return true
		}
	}
	return false
}

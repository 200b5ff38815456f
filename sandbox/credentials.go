package sandbox

import (
	"os"
	"path/filepath"
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
// others are not even looked for).
func (s *Sandbox) credentialMasks(stateDir string, under ...string) []string {
	if s.opts.Credentials == nil {
		return nil
	}
	var out []string
	for _, c := range s.opts.Credentials(stateDir) {
		if under != nil && !within(filepath.Clean(c), under) {
			continue
		}
		st, err := os.Lstat(c)
		if err != nil {
			continue
		}
		var named []Pattern
		for _, p := range s.opts.ReadAllow {
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

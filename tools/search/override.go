package search

import (
	"fmt"
	"strings"
)

// splitGlobParam splits Grep's glob parameter into patterns: on white
// space, and on commas inside a piece that has no braces (docs/tools.md §6).
func splitGlobParam(s string) []string {
	var out []string
	for _, piece := range strings.Fields(s) {
		if strings.Contains(piece, "{") && strings.Contains(piece, "}") {
			out = append(out, piece)
			continue
		}
		for _, p := range strings.Split(piece, ",") {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// compileOverrides compiles Grep's glob patterns with ripgrep's --glob
// semantics: a pattern keeps matching files, "!pattern" excludes; the last
// matching pattern wins; when any keeping pattern is given, files matching
// none are left out (directories are still entered); a pattern without a
// slash matches a name at any depth, one with a slash is matched against
// the path from the searched directory. Braces, ** and classes work.
// Overrides beat ignore files.
func compileOverrides(globs []string) (*ruleSet, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	rs := &ruleSet{whitelist: true}
	for _, g := range globs {
		r := rule{}
		pat := g
		if strings.HasPrefix(pat, "!") {
			r.negate = true
			pat = pat[1:]
		}
		if strings.HasSuffix(pat, "/") {
			r.dirOnly = true
			pat = strings.TrimRight(pat, "/")
		}
		if strings.Contains(pat, "/") {
			r.anchored = true
			pat = strings.TrimPrefix(pat, "/")
		}
		compiled, ok := finishRule(r, pat)
		if !ok {
			return nil, fmt.Errorf("invalid glob %q: check its brackets and braces (examples: \"*.go\", \"*.{ts,tsx}\", \"!vendor/**\")", g)
		}
		if !compiled.negate {
			rs.hasPlain = true
		}
		rs.rules = append(rs.rules, compiled)
	}
	return rs, nil
}

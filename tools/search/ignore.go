package search

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// decision is what a rule set says about a path.
type decision uint8

const (
	// undecided: no rule matched.
	undecided decision = iota
	// ignoreIt: the last matching rule excludes the path.
	ignoreIt
	// keepIt: the last matching rule is a negation (or a whitelist glob).
	keepIt
)

// vcsDirs are never walked, by either tool (docs/tools.md §6).
var vcsDirs = map[string]bool{".git": true, ".svn": true, ".hg": true, ".bzr": true, ".jj": true, ".sl": true}

// rule is one compiled line of an ignore file (or one override glob).
type rule struct {
	negate   bool // "!pattern"
	dirOnly  bool // "pattern/"
	anchored bool // the pattern holds a slash: matched against the relative path, not the name
	// insideOnly is set for "dir/**": it matches what is inside dir, not
	// dir itself (git can re-include files under such a pattern).
	insideOnly string
	kind       ruleKind
	text       string // literal name, suffix, or doublestar pattern
}

type ruleKind uint8

const (
	ruleGlob    ruleKind = iota // doublestar.Match(text, subject)
	ruleLiteral                 // subject == text
	ruleSuffix                  // strings.HasSuffix(subject, text): "*.ext"
)

func (r *rule) matches(rel, name string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	subject := name
	if r.anchored {
		subject = rel
		if r.insideOnly != "" && rel == r.insideOnly {
			return false
		}
	}
	switch r.kind {
	case ruleLiteral:
		return subject == r.text
	case ruleSuffix:
		return strings.HasSuffix(subject, r.text)
	default:
		return doublestar.MatchUnvalidated(r.text, subject)
	}
}

// ruleSet is the compiled content of one ignore file, or a list of
// override globs. The last matching rule decides.
type ruleSet struct {
	rules []rule
	// whitelist reverses the polarity, as for ripgrep's --glob overrides: a
	// plain pattern keeps, a "!pattern" ignores, and when any plain pattern
	// exists a file that matches none is ignored.
	whitelist  bool
	hasPlain   bool
	sourceName string
}

// match decides for a path relative to the set's directory (slash
// separated) whose last element is name.
func (rs *ruleSet) match(rel, name string, isDir bool) decision {
	if rs == nil {
		return undecided
	}
	for i := len(rs.rules) - 1; i >= 0; i-- {
		r := &rs.rules[i]
		if !r.matches(rel, name, isDir) {
			continue
		}
		if r.negate != rs.whitelist {
			return keepIt
		}
		return ignoreIt
	}
	if rs.whitelist && rs.hasPlain && !isDir {
		return ignoreIt
	}
	return undecided
}

// parseGitignore compiles the lines of a gitignore-format file. Lines that
// are not valid patterns are skipped, as git does.
func parseGitignore(data []byte, source string) *ruleSet {
	rs := &ruleSet{sourceName: source}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if r, ok := compileGitignoreLine(sc.Text()); ok {
			rs.rules = append(rs.rules, r)
		}
	}
	if len(rs.rules) == 0 {
		return nil
	}
	return rs
}

// compileGitignoreLine compiles one line following gitignore(5).
func compileGitignoreLine(line string) (rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	line = trimUnescapedTrailingSpaces(line)
	var r rule
	if line != "" && line[0] == '!' {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return rule{}, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	// gitignore has no braces: a brace is an ordinary character there.
	line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
	return finishRule(r, line)
}

// finishRule validates the pattern and picks a fast matching strategy.
func finishRule(r rule, pat string) (rule, bool) {
	if pat == "" || !doublestar.ValidatePattern(pat) {
		return rule{}, false
	}
	if r.anchored && strings.HasSuffix(pat, "/**") {
		r.insideOnly = strings.TrimSuffix(pat, "/**")
		if hasMeta(r.insideOnly) {
			r.insideOnly = ""
		}
	}
	r.kind, r.text = ruleGlob, pat
	switch {
	case !hasMeta(pat):
		r.kind = ruleLiteral
	case !r.anchored && pat[0] == '*' && len(pat) > 1 && !hasMeta(pat[1:]):
		r.kind, r.text = ruleSuffix, pat[1:]
	}
	return r, true
}

// hasMeta reports whether a doublestar pattern holds any special character.
func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[]{}\`) }

// trimUnescapedTrailingSpaces drops trailing spaces unless escaped with a
// backslash, which is then removed.
func trimUnescapedTrailingSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			return s[:end-2] + " "
		}
		end--
	}
	return s[:end]
}

// ignoreNode holds the ignore rules that apply in one directory and links
// to its parent's. Nodes are immutable once built, so workers share them.
type ignoreNode struct {
	parent    *ignoreNode
	dir       string   // absolute
	dotIgnore *ruleSet // .ignore
	gitIgnore *ruleSet // .gitignore, only inside a git repository
	repoRoot  bool     // dir holds .git
	exclude   *ruleSet // .git/info/exclude, at a repository root
	global    *ruleSet // the user's global excludes, at a repository root
	inRepo    bool     // dir is inside a git repository
}

// ignoreFiles is what a directory listing revealed about ignore files.
type ignoreFiles struct{ hasGit, hasGitignore, hasIgnore bool }

// child builds the node of dir, a subdirectory of n's directory. read
// reads a file of dir by name (nil: by path); a walk reads .ignore and
// .gitignore through the directory's descriptor following no symbolic
// link, as it found them in the listing.
func (n *ignoreNode) child(dir string, f ignoreFiles, global *ruleSet, read func(name string) ([]byte, error)) *ignoreNode {
	c := &ignoreNode{parent: n, dir: dir}
	if n != nil {
		c.inRepo = n.inRepo
	}
	if f.hasGit {
		c.repoRoot, c.inRepo = true, true
		c.exclude = loadRules(filepath.Join(dir, ".git", "info", "exclude"))
		c.global = global
	}
	if f.hasIgnore {
		c.dotIgnore = loadRulesIn(dir, ".ignore", read)
	}
	if f.hasGitignore && c.inRepo {
		c.gitIgnore = loadRulesIn(dir, ".gitignore", read)
	}
	return c
}

// loadRulesIn loads the rules of the file name in dir, read with read
// (nil: by path).
func loadRulesIn(dir, name string, read func(name string) ([]byte, error)) *ruleSet {
	if read == nil {
		return loadRules(filepath.Join(dir, name))
	}
	data, err := read(name)
	if err != nil {
		return nil
	}
	return parseGitignore(data, filepath.Join(dir, name))
}

func loadRules(path string) *ruleSet {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseGitignore(data, path)
}

// relTo returns abs relative to dir (slash separated), or "" when abs is
// not below dir.
func relTo(abs, dir string) string {
	if dir == "/" {
		return strings.TrimPrefix(abs, "/")
	}
	if len(abs) > len(dir) && strings.HasPrefix(abs, dir) && abs[len(dir)] == '/' {
		return abs[len(dir)+1:]
	}
	return ""
}

// ignored reports whether the entry abs (named name) inside n's directory
// is excluded. Precedence follows ripgrep: .ignore beats .gitignore beats
// .git/info/exclude beats the global excludes; within each kind the
// deepest directory that has an opinion wins, and within a file the last
// matching line.
func (n *ignoreNode) ignored(abs, name string, isDir bool) bool {
	for p := n; p != nil; p = p.parent {
		if p.dotIgnore != nil {
			if d := p.dotIgnore.match(relTo(abs, p.dir), name, isDir); d != undecided {
				return d == ignoreIt
			}
		}
	}
	if n == nil || !n.inRepo {
		return false
	}
	var root *ignoreNode
	for p := n; p != nil; p = p.parent {
		if p.gitIgnore != nil {
			if d := p.gitIgnore.match(relTo(abs, p.dir), name, isDir); d != undecided {
				return d == ignoreIt
			}
		}
		if p.repoRoot {
			root = p
			break
		}
	}
	if root == nil {
		return false
	}
	rel := relTo(abs, root.dir)
	if d := root.exclude.match(rel, name, isDir); d != undecided {
		return d == ignoreIt
	}
	return root.global.match(rel, name, isDir) == ignoreIt
}

// ancestorNodes builds the ignore chain for a walk rooted at root: the
// rules of every ancestor directory apply, as they do for ripgrep, with
// .gitignore files honoured from the repository root down.
func ancestorNodes(root string, global *ruleSet) *ignoreNode {
	var dirs []string
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	var n *ignoreNode
	for i := len(dirs) - 1; i >= 0; i-- {
		n = n.child(dirs[i], probeIgnoreFiles(dirs[i]), global, nil)
	}
	return n
}

// probeIgnoreFiles stats the ignore-related names in dir.
func probeIgnoreFiles(dir string) ignoreFiles {
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	return ignoreFiles{hasGit: exists(".git"), hasGitignore: exists(".gitignore"), hasIgnore: exists(".ignore")}
}

// globalExcludes loads the user's global git excludes: core.excludesFile
// from the git configuration, else $XDG_CONFIG_HOME/git/ignore (default
// ~/.config/git/ignore).
func globalExcludes() *ruleSet {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var path string
	for _, cfg := range []string{filepath.Join(home, ".gitconfig"), filepath.Join(xdg, "git", "config")} {
		if home == "" && !filepath.IsAbs(cfg) {
			continue
		}
		if p := gitConfigExcludesFile(cfg); p != "" {
			path = p
			break
		}
	}
	if path == "" {
		if xdg == "" {
			return nil
		}
		path = filepath.Join(xdg, "git", "ignore")
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		path = filepath.Join(home, path[1:])
	}
	return loadRules(path)
}

// gitConfigExcludesFile reads core.excludesFile from a git config file.
func gitConfigExcludesFile(cfg string) string {
	data, err := os.ReadFile(cfg)
	if err != nil {
		return ""
	}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || section != "core" || !strings.EqualFold(strings.TrimSpace(key), "excludesfile") {
			continue
		}
		val = strings.TrimSpace(val)
		if i := strings.IndexAny(val, "#;"); i >= 0 && !strings.HasPrefix(val, `"`) {
			val = strings.TrimSpace(val[:i])
		}
		return strings.Trim(val, `"`)
	}
	return ""
}

package permissions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// SourcedRule is a rule with where it came from and how it is compiled.
type SourcedRule struct {
	Rule
	Behavior Behavior
	// Source names where the rule was written (a settings file path,
	// "--allowed-tools", "session").
	Source string

	cmd   *commandPattern
	path  *pathPattern
	param *paramPattern
}

type paramPattern struct{ key, value string }

// NewSourcedRule compiles r for matching; path specifiers are anchored at a.
func NewSourcedRule(r Rule, b Behavior, source string, a Anchors) (*SourcedRule, error) {
	sr := &SourcedRule{Rule: r, Behavior: b, Source: source}
	if r.Whole() {
		return sr, nil
	}
	sr.cmd = compileCommandPattern(r.Specifier)
	if p, err := compilePathPattern(r.Specifier, a); err == nil {
		sr.path = p
	} else if r.Tool == "Read" || r.Tool == "Edit" {
		if k, _, ok := strings.Cut(r.Specifier, ":"); !ok || !isIdent(k) {
			return nil, fmt.Errorf("permission rule %s (from %s): %w", r, source, err)
		}
	}
	if k, v, ok := strings.Cut(r.Specifier, ":"); ok && isIdent(k) {
		sr.param = &paramPattern{key: k, value: v}
	}
	return sr, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Access is one path a call touches, for rule matching.
type Access struct {
	// Path is absolute and clean, as the caller wrote it.
	Path string
	// Real is Path with every symlink resolved ([confine.ResolvePath]).
	Real  string
	Write bool
	IsDir bool
	// Subtree is set when the call may touch everything below Path (a
	// recursive command): a rule covering anything there covers the call.
	Subtree bool
	// Guessed is set for an argument of a program whose arguments'
	// meaning is not known (`make test`): deny rules, protected paths and
	// confinement judge it, but inside the working directories it needs
	// no confirmation of its own (the command itself is judged).
	Guessed bool
}

// Target is a call as rules see it.
type Target struct {
	Tool    string
	Aliases []string
	// Fields are the names of the tool's input properties; a specifier
	// `key:value` is a parameter rule when key is one of them.
	Fields []string
	// Input is the call's arguments by field.
	Input map[string]json.RawMessage
	// Accesses are the paths the call touches.
	Accesses []Access
	// Bash is the analysed command line of a Bash call.
	Bash *CommandLine
	// URL is the address a WebFetch call fetches.
	URL *url.URL
}

// Match is a rule that matched and what it matched.
type Match struct {
	Rule *SourcedRule
	// What names the part of the call that matched: the tool, a command,
	// a path, a domain, a parameter.
	What string
}

// RuleSet holds compiled rules in settings order.
type RuleSet struct {
	rules []*SourcedRule
}

// AddText parses rules written in settings syntax and adds them with
// behavior b, from source, path specifiers anchored at a. The error names
// the source and the rule.
func (rs *RuleSet) AddText(b Behavior, rules []string, source string, a Anchors) error {
	for _, text := range rules {
		r, err := ParseRule(text)
		if err != nil {
			return fmt.Errorf("settings %s: permissions.%s: %w", source, b, err)
		}
		sr, err := NewSourcedRule(r, b, source, a)
		if err != nil {
			return fmt.Errorf("settings %s: permissions.%s: %w", source, b, err)
		}
		rs.Add(sr)
	}
	return nil
}

// Add appends rules.
func (rs *RuleSet) Add(rules ...*SourcedRule) { rs.rules = append(rs.rules, rules...) }

// Rules lists the rules of behavior b, in order.
func (rs *RuleSet) Rules(b Behavior) []*SourcedRule {
	if rs == nil {
		return nil
	}
	var out []*SourcedRule
	for _, r := range rs.rules {
		if r.Behavior == b {
			out = append(out, r)
		}
	}
	return out
}

// Len is the number of rules.
func (rs *RuleSet) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

// With returns a set holding rs's rules followed by more.
func (rs *RuleSet) With(more ...*SourcedRule) *RuleSet {
	out := &RuleSet{}
	if rs != nil {
		out.rules = slices.Clone(rs.rules)
	}
	out.rules = append(out.rules, more...)
	return out
}

// DeniesWholeTool reports whether a deny rule names the whole tool, which
// hides it from the pool.
func (rs *RuleSet) DeniesWholeTool(name string, aliases ...string) *SourcedRule {
	for _, r := range rs.Rules(Deny) {
		if r.Whole() && r.NamesTool(name, aliases...) {
			return r
		}
	}
	return nil
}

// Find returns the first rule of behavior b (deny or ask) that matches any
// part of the call: the whole tool, a parameter, any simple command of a
// Bash line however it is spelled, the fetched domain, or any path
// touched (as written or resolved). Nil when none does.
func (rs *RuleSet) Find(b Behavior, t *Target) *Match {
	for _, r := range rs.Rules(b) {
		if m := r.matchAny(t); m != "" {
			return &Match{Rule: r, What: m}
		}
	}
	return nil
}

// FindBelow returns the first rule of behavior b whose path pattern may
// match something below a subtree access of the call (`grep -r x .` under
// a deny on `secret/**`). Nil when none may.
func (rs *RuleSet) FindBelow(b Behavior, t *Target) *Match {
	for _, r := range rs.Rules(b) {
		if r.path == nil || r.isParam(t) || strings.HasPrefix(r.Specifier, "domain:") {
			continue
		}
		for _, a := range t.Accesses {
			if !a.Subtree || !(a.Write && r.Tool == "Edit" || !a.Write && r.Tool == "Read" || r.NamesTool(t.Tool, t.Aliases...) && t.Bash == nil) {
				continue
			}
			if r.path.mayMatchBelow(a.Path) || r.path.mayMatchBelow(a.Real) {
				return &Match{Rule: r, What: a.Path}
			}
		}
	}
	return nil
}

// ReadDenied returns a check of whether a deny rule covers reading a
// path (a Read rule, or one naming the tool), for tools that walk below
// the paths they were allowed; nil when no such rule exists.
func (rs *RuleSet) ReadDenied(tool string, aliases ...string) func(abs string, isDir bool) bool {
	var deny []*SourcedRule
	for _, r := range rs.Rules(Deny) {
		if r.path != nil && (r.Tool == "Read" || r.NamesTool(tool, aliases...)) {
			deny = append(deny, r)
		}
	}
	if len(deny) == 0 {
		return nil
	}
	return func(abs string, isDir bool) bool {
		for _, r := range deny {
			if r.path.match(abs, isDir) {
				return true
			}
		}
		if !isDir {
			return false // its directory was judged before the walk reached it
		}
		real, err := confine.ResolvePath(abs)
		if err != nil || real == abs {
			return false
		}
		for _, r := range deny {
			if r.path.match(real, isDir) {
				return true
			}
		}
		return false
	}
}

// HasPathRules reports whether any rule of behavior b is a Read (write
// false) or Edit (write true) rule: an unknown path could be one of
// theirs.
func (rs *RuleSet) HasPathRules(b Behavior, write bool) bool {
	for _, r := range rs.Rules(b) {
		if write && r.Tool == "Edit" || !write && r.Tool == "Read" {
			return true
		}
	}
	return false
}

// HasCommandRules reports whether any rule of behavior b is about Bash
// commands: such rules cannot be checked against a command that is not
// known, so that command must be asked about.
func (rs *RuleSet) HasCommandRules(b Behavior) bool {
	for _, r := range rs.Rules(b) {
		if r.NamesTool("Bash") {
			return true
		}
	}
	return false
}

func (r *SourcedRule) matchAny(t *Target) string {
	if r.Whole() {
		if r.NamesTool(t.Tool, t.Aliases...) {
			return t.Tool
		}
		for _, a := range t.Accesses {
			if r.coversAccess(t, a) && (a.Write && r.Tool == "Edit" || !a.Write && r.Tool == "Read") {
				return a.Path
			}
		}
		return ""
	}
	if m := r.matchParam(t); m != "" {
		return m
	}
	if r.isParam(t) {
		return ""
	}
	if t.Bash != nil && r.NamesTool(t.Tool, t.Aliases...) {
		for _, c := range t.Bash.Commands {
			for _, text := range c.denyTexts {
				if r.cmd.match(text) {
					return c.Text
				}
			}
		}
		if t.Bash.Err != nil && r.cmd.match(t.Bash.Raw) {
			return t.Bash.Raw
		}
	}
	if m := r.matchDomain(t); m != "" {
		return m
	}
	for _, a := range t.Accesses {
		if r.coversAccess(t, a) && r.path != nil && (r.path.match(a.Path, a.IsDir) || r.path.match(a.Real, a.IsDir)) {
			return a.Path
		}
	}
	return ""
}

// coversAccess reports whether the rule's tool is about this access: Read
// rules cover every read, Edit rules every write, and a rule naming the
// calling tool covers all of its paths.
func (r *SourcedRule) coversAccess(t *Target, a Access) bool {
	if strings.HasPrefix(r.Specifier, "domain:") {
		return false
	}
	switch r.Tool {
	case "Read":
		return !a.Write || r.NamesTool(t.Tool, t.Aliases...)
	case "Edit":
		return a.Write || r.NamesTool(t.Tool, t.Aliases...)
	}
	// A Bash specifier is a command, never a path.
	return t.Bash == nil && r.NamesTool(t.Tool, t.Aliases...)
}

// isParam reports whether the specifier is `field:value` for a field of
// the tool. For Bash, `word:*` is the legacy prefix syntax instead.
func (r *SourcedRule) isParam(t *Target) bool {
	if r.param == nil || !r.NamesTool(t.Tool, t.Aliases...) || !slices.Contains(t.Fields, r.param.key) {
		return false
	}
	return !(t.Bash != nil && r.param.value == "*")
}

func (r *SourcedRule) matchParam(t *Target) string {
	if !r.isParam(t) {
		return ""
	}
	raw, ok := t.Input[r.param.key]
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return ""
		}
		s = buf.String()
	}
	if globMatch(r.param.value, s) {
		return r.param.key + ":" + s
	}
	return ""
}

func (r *SourcedRule) matchDomain(t *Target) string {
	if t.URL == nil || !r.NamesTool(t.Tool, t.Aliases...) {
		return ""
	}
	d, ok := strings.CutPrefix(r.Specifier, "domain:")
	if !ok {
		return ""
	}
	host := strings.ToLower(t.URL.Hostname())
	d = strings.ToLower(strings.TrimSpace(d))
	if host == d {
		return host
	}
	if sub, ok := strings.CutPrefix(d, "*."); ok && strings.HasSuffix(host, "."+sub) {
		return host
	}
	return ""
}

// AllowsTool returns the allow rule that lets the whole call run: one that
// names the whole tool, or (for tools other than Bash) a parameter rule
// matching the input.
func (rs *RuleSet) AllowsTool(t *Target) *SourcedRule {
	for _, r := range rs.Rules(Allow) {
		if r.Whole() && r.NamesTool(t.Tool, t.Aliases...) {
			return r
		}
		if t.Bash == nil && r.matchParam(t) != "" {
			return r
		}
	}
	return nil
}

// AllowsCommand returns the allow rule that lets this simple command run,
// matched against its effective text only. A command that is not known is
// never allowed by a rule.
func (rs *RuleSet) AllowsCommand(t *Target, c CommandView) *SourcedRule {
	if !c.Known && !c.Cmd.Reader {
		return nil
	}
	for _, r := range rs.Rules(Allow) {
		if r.Whole() || !r.NamesTool(t.Tool, t.Aliases...) || r.isParam(t) {
			continue
		}
		for _, text := range c.allowTexts() {
			if r.cmd.match(text) {
				return r
			}
		}
	}
	return nil
}

// AllowsAccess returns the allow rule that covers a path: a Read or Edit
// rule (an Edit allow also allows reading) or one naming the tool, whose
// pattern matches where the path resolves to.
func (rs *RuleSet) AllowsAccess(t *Target, a Access) *SourcedRule {
	for _, r := range rs.Rules(Allow) {
		covers := r.coversAccess(t, a) || (!a.Write && r.Tool == "Edit")
		if !covers || r.isParam(t) {
			continue
		}
		if r.Whole() {
			if r.Tool == "Read" && !a.Write || r.Tool == "Edit" {
				return r
			}
			continue
		}
		if r.path != nil && r.path.match(a.Real, a.IsDir) {
			return r
		}
	}
	return nil
}

// AllowsProtected returns the allow rule that lets a call write the
// protected path of a: one that covers it and names a protected path
// itself ([SourcedRule.NamesProtected]). Wider rules (`Edit(//proj/**)`,
// a whole-tool `Edit`, a session grant of a directory) never do.
func (rs *RuleSet) AllowsProtected(t *Target, a Access) *SourcedRule {
	for _, r := range rs.Rules(Allow) {
		if r.Whole() || !r.NamesProtected() || !r.coversAccess(t, a) || r.isParam(t) {
			continue
		}
		if r.path != nil && (r.path.match(a.Real, a.IsDir) && r.path.match(a.Path, a.IsDir)) {
			return r
		}
	}
	return nil
}

// AllowsDomain returns the allow rule for the fetched domain.
func (rs *RuleSet) AllowsDomain(t *Target) *SourcedRule {
	for _, r := range rs.Rules(Allow) {
		if r.matchDomain(t) != "" {
			return r
		}
	}
	return nil
}

// MatchesPath reports whether the rule's path pattern matches abs (a file).
func (r *SourcedRule) MatchesPath(abs string) bool {
	return r.path != nil && r.path.match(abs, false)
}

package permissions

import (
	"fmt"
	"strings"
)

// Rule is one permission rule as written in settings: `Tool` for the whole
// tool, or `Tool(specifier)` for some of its calls.
//
// What a specifier means depends on the tool (docs/tools.md §9): a command pattern
// for Bash, a gitignore-style path pattern for Read and Edit (and any tool
// given paths), `domain:host` for WebFetch, and `param:value` for any input
// field the tool has. The specifier is kept as written and interpreted when
// a call is matched, where the tool and its input fields are known.
type Rule struct {
	// Tool is the tool name: a built-in name, or `mcp__server`,
	// `mcp__server__*` or `mcp__server__tool` for upstream MCP tools.
	Tool string
	// Specifier is the text between the parentheses with `\(` and `\)`
	// unescaped; empty for a whole-tool rule.
	Specifier string
}

// Whole reports whether the rule names the whole tool.
func (r Rule) Whole() bool { return r.Specifier == "" }

// String renders the rule in settings syntax.
func (r Rule) String() string {
	if r.Whole() {
		return r.Tool
	}
	s := strings.ReplaceAll(r.Specifier, "(", `\(`)
	s = strings.ReplaceAll(s, ")", `\)`)
	return r.Tool + "(" + s + ")"
}

// ParseRule parses a rule in settings syntax. `Tool()` and `Tool(*)` mean
// the whole tool. Parentheses inside the specifier are written `\(` and
// `\)`; an unescaped one is an error, since it usually means a typo that
// would otherwise silently match nothing.
func ParseRule(s string) (Rule, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, fmt.Errorf("empty permission rule: write a tool name such as Bash or Read(src/**)")
	}
	open := strings.IndexByte(s, '(')
	name := s
	spec := ""
	if open >= 0 {
		name = strings.TrimSpace(s[:open])
		if !strings.HasSuffix(s, ")") || oddBackslashes(s[:len(s)-1]) {
			return Rule{}, fmt.Errorf("permission rule %q: the specifier must end with an unescaped ')': write Tool(specifier)", orig)
		}
		inner := s[open+1 : len(s)-1]
		var b strings.Builder
		for i := 0; i < len(inner); i++ {
			c := inner[i]
			switch {
			case c == '\\' && i+1 < len(inner) && (inner[i+1] == '(' || inner[i+1] == ')'):
				b.WriteByte(inner[i+1])
				i++
			case c == '(' || c == ')':
				return Rule{}, fmt.Errorf("permission rule %q: unescaped %q inside the specifier: write \\%c", orig, c, c)
			default:
				b.WriteByte(c)
			}
		}
		spec = strings.TrimSpace(b.String())
		if oddBackslashes(spec) {
			return Rule{}, fmt.Errorf("permission rule %q: the specifier ends with a lone backslash", orig)
		}
		if spec == "*" {
			spec = ""
		}
	}
	if err := checkToolName(name); err != nil {
		return Rule{}, fmt.Errorf("permission rule %q: %w", orig, err)
	}
	return Rule{Tool: name, Specifier: spec}, nil
}

// checkToolName accepts tool names: letters, digits, '_' and '-', and a
// trailing "*" only in an `mcp__server__*` rule.
func checkToolName(name string) error {
	if name == "" {
		return fmt.Errorf("missing tool name before '('")
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		case c == '*' && i == len(name)-1 && strings.HasPrefix(name, "mcp__") && strings.HasSuffix(name, "__*"):
		default:
			return fmt.Errorf("tool name %q has %q: a tool name has letters, digits, '_' and '-' only", name, c)
		}
	}
	return nil
}

// NamesTool reports whether the rule's tool part names the tool called
// name (or one of its aliases): equal names, or an `mcp__server` /
// `mcp__server__*` rule and a tool of that server.
func (r Rule) NamesTool(name string, aliases ...string) bool {
	for _, n := range append([]string{name}, aliases...) {
		if r.Tool == n {
			return true
		}
	}
	if server, ok := strings.CutPrefix(r.Tool, "mcp__"); ok {
		server = strings.TrimSuffix(server, "__*")
		if server != "" && !strings.Contains(server, "__") {
			return strings.HasPrefix(name, "mcp__"+server+"__")
		}
	}
	return false
}

// SplitRuleList splits a flag value such as `Read,Bash(git log *) Edit`
// into rules: commas and whitespace separate rules except inside
// parentheses.
func SplitRuleList(s string) []string {
	var out []string
	depth := 0
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if r := strings.TrimSpace(s[start:end]); r != "" {
				out = append(out, r)
			}
			start = -1
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			if start < 0 {
				start = i
			}
			i++
		case c == '(':
			depth++
			if start < 0 {
				start = i
			}
		case c == ')':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n'):
			flush(i)
		default:
			if start < 0 {
				start = i
			}
		}
	}
	flush(len(s))
	return out
}

// oddBackslashes reports whether s ends with an odd number of backslashes,
// which would escape whatever follows.
func oddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

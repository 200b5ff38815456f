package permissions

import (
	"regexp"
	"strings"
)

// commandPattern is a compiled Bash specifier (docs/tools.md §9): an exact
// command, or `*` wildcards anywhere. `cmd *` keeps a word boundary and also
// matches `cmd` alone; a trailing `:*` means the same as ` *`. `\*` is a
// literal star and `\\` a literal backslash.
type commandPattern struct {
	re *regexp.Regexp
	// prefix is the literal text before the first wildcard, used to name
	// the program a rule is about.
	prefix string
}

func compileCommandPattern(spec string) *commandPattern {
	spec = strings.TrimSpace(spec)
	if strings.HasSuffix(spec, ":*") && !strings.HasSuffix(spec, `\:*`) {
		spec = strings.TrimSuffix(spec, ":*") + " *"
	}
	var b strings.Builder
	stars := 0
	prefixDone := false
	var prefix strings.Builder
	lit := func(s string) {
		b.WriteString(regexp.QuoteMeta(s))
		if !prefixDone {
			prefix.WriteString(s)
		}
	}
	for i := 0; i < len(spec); i++ {
		c := spec[i]
		switch {
		case c == '\\' && i+1 < len(spec) && (spec[i+1] == '*' || spec[i+1] == '\\'):
			lit(string(spec[i+1]))
			i++
		case c == '*':
			stars++
			prefixDone = true
			b.WriteString(".*")
		default:
			lit(string(c))
		}
	}
	expr := b.String()
	// "cmd *" with no other wildcard also matches "cmd" with no arguments.
	if stars == 1 && strings.HasSuffix(expr, " .*") {
		expr = strings.TrimSuffix(expr, " .*") + "( .*)?"
	}
	return &commandPattern{re: regexp.MustCompile(`(?s)\A` + expr + `\z`), prefix: prefix.String()}
}

func (p *commandPattern) match(cmd string) bool {
	return p.re.MatchString(strings.TrimSpace(cmd))
}

// escapeCommandSpec writes a command as a Bash specifier that matches it
// exactly: stars and backslashes escaped.
func escapeCommandSpec(cmd string) string {
	cmd = strings.ReplaceAll(cmd, `\`, `\\`)
	return strings.ReplaceAll(cmd, "*", `\*`)
}

// globPattern matches a `param:value` or `domain:` value: `*` matches any
// run of characters, everything else is literal.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

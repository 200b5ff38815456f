package shellcmd

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// stdinSource is what a command reads on its standard input, when that
// matters (a shell reading its script there): text is the literal input
// (a here-document, a here-string, `echo 'x' |`); known is false when the
// input is something only known when it runs (a pipe from another
// program, a file).
type stdinSource struct {
	text  *string
	known bool
}

// heredocText is the body of a here-document when it is literal.
func heredocText(body *syntax.Word) (*string, bool) {
	if body == nil {
		s := ""
		return &s, true
	}
	var b strings.Builder
	for _, p := range body.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return nil, false
		}
		b.WriteString(l.Value)
	}
	s := b.String()
	return &s, true
}

// printedText is what a pipe's left side prints when it is an echo or
// printf of literal words (`echo 'rm x' | sh`); known is false otherwise.
func printedText(src string, st *syntax.Stmt) (*string, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(st.Redirs) > 0 {
		return nil, false
	}
	words := make([]string, len(call.Args))
	for i, w := range call.Args {
		ww := word(src, w)
		v, lit := ww.Literal()
		if !lit {
			return nil, false
		}
		words[i] = v
	}
	return echoText(words)
}

// echoText is the output of `echo ARGS` or `printf FORMAT` when it can be
// told without running it.
func echoText(words []string) (*string, bool) {
	switch path.Base(words[0]) {
	case "echo":
		args := words[1:]
		nl := "\n"
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-E") {
			if args[0] == "-n" {
				nl = ""
			}
			args = args[1:]
		}
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			return nil, false // -e and the like: escapes we do not expand
		}
		s := strings.Join(args, " ") + nl
		return &s, true
	case "printf":
		if len(words) != 2 || strings.Contains(words[1], "%") {
			return nil, false
		}
		f := strings.ReplaceAll(words[1], `\n`, "\n")
		if strings.Contains(f, `\`) {
			return nil, false
		}
		return &f, true
	}
	return nil, false
}

// assigned notes a variable the line sets that changes what later words
// mean.
func (a *analyzer) assigned(name string) {
	if name == "CDPATH" {
		a.cdpath = true
	}
	if name == "LESSSECURE" {
		a.lessInsecure = true
	}
}

// special handles the commands that change what later commands mean (cd,
// alias, hash -p, shopt) or run a script given in another way (a shell
// reading stdin, trap, env -S, `. <(...)`, an alias). handled is true when
// c itself is replaced by the commands of its script.
func (a *analyzer) special(c *Command, name string, depth int, stdin stdinSource, top bool) (handled bool, err error) {
	if v, ok := a.aliases[name]; ok {
		parts := []string{v}
		for _, w := range c.Args[1:] {
			parts = append(parts, w.Source)
		}
		return true, a.script(strings.Join(parts, " "), appendVia(c.Via, "alias "+name), c.Assigns, depth+1)
	}
	if p, ok := a.hashed[name]; ok {
		c.Args[0] = Word{Value: p, Source: p}
		name = p
	}
	base := name
	if strings.Contains(name, "/") && standardDir(path.Dir(name)) {
		base = path.Base(name)
	}
	args := c.Args[1:]
	switch base {
	case "cd", "pushd", "popd":
		a.cd(*c, top)
	case "shopt":
		a.shopt(args)
	case "alias":
		a.alias(c, args)
	case "hash":
		a.hash(c, args)
	case "trap":
		ops := args
		if len(ops) > 0 {
			switch ops[0].Value {
			case "--":
				ops = ops[1:]
			case "-p", "-l", "-P":
				return false, nil // listing
			}
		}
		if len(ops) < 2 {
			return false, nil
		}
		action := ops[0]
		switch v, lit := action.Literal(); {
		case !lit && action.Dynamic:
			c.Opaque = true
		case v == "-" || v == "":
		default:
			if err := a.script(v, appendVia(c.Via, "trap"), c.Assigns, depth+1); err != nil {
				return false, err
			}
		}
	case "env":
		p := parseOpts(args, "SuCa", []string{"split-string", "unset", "chdir", "argv0"})
		if s, ok := p.value("S", "split-string"); ok {
			if s.Dynamic {
				c.Opaque = true
				return false, nil
			}
			parts := []string{s.Value}
			for _, w := range p.operands {
				parts = append(parts, w.Source)
			}
			return true, a.script(strings.Join(parts, " "), appendVia(c.Via, "env -S"), c.Assigns, depth+1)
		}
	case "source", ".":
		if len(args) > 0 && args[0].ProcSubst {
			inner := strings.TrimSuffix(strings.TrimPrefix(args[0].Source, "<("), ")")
			if f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(inner), ""); err == nil && len(f.Stmts) == 1 {
				if text, ok := printedText(inner, f.Stmts[0]); ok {
					return true, a.script(*text, appendVia(c.Via, base+" <(...)"), c.Assigns, depth+1)
				}
			}
			c.Opaque = true
		}
	default:
		if shells[base] && (!strings.Contains(name, "/") || standardDir(path.Dir(name))) {
			if _, found := shellScript(name, c.Args); found {
				return false, nil // -c: handled by command
			}
			if readsStdin(args) {
				switch {
				case stdin.text != nil:
					return true, a.script(*stdin.text, appendVia(c.Via, base+" <stdin>"), c.Assigns, depth+1)
				case !stdin.known:
					c.Opaque = true
				}
			}
		}
	}
	return false, nil
}

// shopt notes the shell options that change what a later line means:
// cdable_vars (cd to a variable's value) and the glob options (what a
// pattern matches); a dynamic option name may be either.
func (a *analyzer) shopt(args []Word) {
	for _, w := range args {
		switch w.Value {
		case "cdable_vars":
			a.cdableVars = true
		case "extglob", "nullglob", "failglob", "dotglob", "globstar", "nocaseglob", "globasciiranges":
			a.globsUnknown = true
		}
		if w.Dynamic {
			a.cdableVars, a.globsUnknown = true, true
		}
	}
}

// alias notes the aliases c defines, for the commands after it; one only
// known when it runs makes c opaque.
func (a *analyzer) alias(c *Command, args []Word) {
	for _, w := range args {
		k, v, eq := strings.Cut(w.Value, "=")
		if !eq || strings.HasPrefix(k, "-") {
			continue
		}
		if w.Dynamic || w.Pattern {
			c.Opaque = true
			continue
		}
		a.aliases[k] = v
	}
}

// hash notes the programs `hash -p PATH NAME` makes NAME run; a PATH only
// known when it runs makes c opaque.
func (a *analyzer) hash(c *Command, args []Word) {
	p := parseOpts(args, "p", nil)
	if t, ok := p.value("p"); ok && len(p.operands) > 0 {
		if t.Dynamic {
			c.Opaque = true
		}
		for _, n := range p.operands {
			a.hashed[n.Value] = t.Value
		}
	}
}

// readsStdin reports whether a shell given args (and no -c) reads its
// script from standard input: no script operand, -s, or the script named
// "-" or /dev/stdin.
func readsStdin(args []Word) bool {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case args[i].Dynamic:
			return false
		case v == "-o" || v == "+o" || v == "-O" || v == "+O":
			i++
		case v == "-":
			return true
		case v == "--":
			return i+1 >= len(args) || readsStdin(args[i+1:i+2]) && !strings.HasPrefix(args[i+1].Value, "-")
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			if v[0] == '-' && strings.ContainsRune(v[1:], 's') {
				return true
			}
		default:
			return v == "/dev/stdin" || v == "/dev/fd/0" || v == "/proc/self/fd/0"
		}
	}
	return true
}

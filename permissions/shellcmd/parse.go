package shellcmd

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Script is the analysis of one command line.
type Script struct {
	// Commands are the simple commands the line may run, in source order;
	// commands found inside a substitution come after the command whose
	// words contain it.
	Commands []Command
	// Writes lists every redirection that may write a file, wherever it
	// appears: on a simple command, on a group or loop, on a `bash -c`
	// whose script was split, or a wrapper's output option (`time -o F`).
	// Check file writes here rather than in each command's Redirects.
	// Redirections to a file descriptor (`2>&1`, `>&-`) are not writes;
	// redirections to /dev/null are (use [Redirect.Harmless] to skip them).
	Writes []Redirect
	// Files are the paths the line reads and writes as its words show
	// them: redirection targets (input ones too, and `$(< f)`), and the
	// arguments of known programs in path positions (cp's destination,
	// sed -i's files, dd's of=, tar -C, ...), each relative to where the
	// line's cd, env -C, git -C or tar -C moved.
	Files []FileUse
	// Unknowns are the reads and writes of paths only known when the line
	// runs: a computed or glob word in a path position, a relative path
	// after a cd to an unknown place.
	Unknowns []Unknown
	// Network lists the /dev/tcp and /dev/udp paths the line opens.
	Network []string
}

// Command is one simple command.
type Command struct {
	// Args is the effective argv: after wrappers are looked through,
	// Args[0] is the program that does the work. It is never empty.
	Args []Word
	// Assigns are the VAR=value assignments in effect for the command:
	// the ones before it, before its wrappers, and env's operands.
	Assigns []Assign
	// Wrappers are the wrapper invocations looked through, outermost first,
	// each with its own options (e.g. [timeout 10], [nice -n 5]).
	Wrappers [][]Word
	// Redirects are the redirections written on this command (all kinds:
	// input, output, here-documents, fd duplication).
	Redirects []Redirect
	// Source is the command's text as written (assignments, wrappers,
	// words and redirections), taken from the script that contained it.
	Source string
	// Via says how the command was reached when it was not written at the
	// top level of the line: "bash -c", "eval", ... outermost first.
	Via []string
	// Decl marks a declaration builtin (export, declare, local, readonly,
	// typeset, nameref); Args then holds its name and operands.
	Decl bool
	// Opaque is set when the command runs a script whose text is only
	// known when it runs (a shell reading a script from a pipe, `. <(cmd)`,
	// `trap "$x"`, an alias of a computed value), or reads its commands
	// from its terminal (a shell with no script, an interpreter with no
	// program, an editor or database client: [ReadsFromTerminal]).
	Opaque bool
	// OpaqueWhy says why a command reading from its terminal is opaque;
	// empty for the other reasons.
	OpaqueWhy string
	// Reader is set when the command is opaque only for reading its
	// commands as it runs: its program is known, and an allow rule
	// naming it allows it.
	Reader bool
}

// Word is one word of a command as the shell would see it.
type Word struct {
	// Value is the word after quote removal when it is static; for a
	// dynamic word it is the word's source text.
	Value string
	// Source is the word as written.
	Source string
	// Dynamic is true when the value is only known when the command runs
	// ($VAR, ${...}, $(...), `...`, $((...)), <(...)).
	Dynamic bool
	// Pattern is true when the word holds unquoted glob (* ? [ extglob) or
	// brace-expansion characters, so the shell may turn it into other
	// words.
	Pattern bool
	// ProcSubst is true when the whole word is a process substitution
	// (`<(cmd)`), a pipe rather than a file.
	ProcSubst bool
}

// Literal returns the word's value and true when it is one fixed string.
func (w Word) Literal() (string, bool) {
	return w.Value, !w.Dynamic && !w.Pattern
}

// Assign is a VAR=value assignment.
type Assign struct {
	Name  string
	Value Word
	// Append is true for VAR+=value.
	Append bool
}

// Redirect is one redirection.
type Redirect struct {
	// Op is the operator as written (">", ">>", "&>", "<", "<<", "<<<",
	// ">&", ...), or the option for a write made by a wrapper's option
	// ("-o" of time).
	Op string
	// Fd is the explicit file descriptor ("2" in 2>file), or "".
	Fd string
	// Target is the file name, fd number, or here-string/here-document
	// delimiter.
	Target Word
}

// IsWrite reports whether the redirection may create or change a file.
func (r Redirect) IsWrite() bool {
	switch r.Op {
	case ">", ">>", ">|", "&>", "&>>", "<>", "-o", "--output":
		return true
	case ">&":
		// >&N duplicates a descriptor, >&- closes one; >&word (bash)
		// sends stdout and stderr to the file word.
		v, ok := r.Target.Literal()
		return !ok || !isFdWord(v)
	}
	return false
}

// Harmless reports whether a write goes to a device that keeps nothing
// (/dev/null, /dev/stdout, /dev/stderr).
func (r Redirect) Harmless() bool {
	v, ok := r.Target.Literal()
	if !ok {
		return false
	}
	switch v {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

func isFdWord(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // ">&-"
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Name returns the program name (Args[0]) and true when it is a fixed
// string.
func (c Command) Name() (string, bool) {
	return c.Args[0].Literal()
}

// Text renders the effective command: the words of Args joined by single
// spaces, static words by their value (quotes removed) and dynamic ones by
// their source text. Permission rules match against this.
func (c Command) Text() string {
	parts := make([]string, len(c.Args))
	for i, w := range c.Args {
		parts[i] = w.Value
	}
	return strings.Join(parts, " ")
}

// Static reports whether the program name and every argument are fixed
// strings.
func (c Command) Static() bool {
	for _, w := range c.Args {
		if _, ok := w.Literal(); !ok {
			return false
		}
	}
	return true
}

// ErrEmpty is returned by [Parse] for a line with no command in it.
var ErrEmpty = errors.New("the command is empty")

// maxDepth bounds nesting of `bash -c` and `eval` scripts.
const maxDepth = 16

// Parse analyses command as a bash command line. It fails when the line
// does not parse (the error says where), when it holds no command at all
// ([ErrEmpty]), or when a literal `bash -c`/`eval` script inside it does
// not parse. A line that fails to parse must be treated as unknown.
func Parse(command string) (*Script, error) {
	if strings.TrimSpace(command) == "" {
		return nil, ErrEmpty
	}
	a := &analyzer{loc: startLoc, acc: startLoc, chain: -1, aliases: map[string]string{}, hashed: map[string]string{}}
	if err := a.script(command, nil, nil, 0); err != nil {
		return nil, err
	}
	if len(a.out.Commands) == 0 && len(a.out.Writes) == 0 && a.stmts == 0 {
		return nil, ErrEmpty
	}
	if a.lessInsecure {
		// less out of its secure mode runs shell commands typed into it
		// (!) and its input preprocessor (LESSOPEN): nothing the line
		// starts can be judged by its words.
		for i := range a.out.Commands {
			c := &a.out.Commands[i]
			c.Opaque, c.Reader = true, false
			if c.OpaqueWhy == "" {
				c.OpaqueWhy = "the line takes less out of its secure mode (LESSSECURE), where it runs commands typed into it and its LESSOPEN preprocessor"
			}
		}
	}
	return &a.out, nil
}

type analyzer struct {
	out   Script
	stmts int

	// loc is where relative paths lead now; acc is where they may lead
	// once the current top-level `&&` chain ends (any cd in it may fail).
	loc, acc loc
	// chain numbers the top-level `&&` chain being analysed.
	chain int
	// chainOf maps the statements of the top-level chains to their
	// number; top holds the simple commands among them, where a cd moves
	// the line (elsewhere it makes later relative paths unknown).
	chainOf map[*syntax.Stmt]int
	top     map[*syntax.Stmt]bool
	// pipeFrom maps the right side of a pipe to its left side.
	pipeFrom map[*syntax.Stmt]*syntax.Stmt
	// cdpath and cdableVars are set once the line sets CDPATH or turns
	// on cdable_vars; globsUnknown once it changes how globs expand.
	cdpath, cdableVars, globsUnknown bool
	// lessInsecure is set once the line changes, unsets or clears
	// LESSSECURE (lessSecurity).
	lessInsecure bool
	// aliases and hashed are the names the line defines with alias and
	// hash -p.
	aliases, hashed map[string]string
}

// script parses src and adds what it finds. via and inherited describe how
// it was reached (a `bash -c` with assignments before it).
func (a *analyzer) script(src string, via []string, inherited []Assign, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("shell scripts nested more than %d deep", maxDepth)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		if len(via) > 0 {
			return fmt.Errorf("parsing the script given to %s: %w", via[len(via)-1], err)
		}
		return fmt.Errorf("parsing the command: %w", err)
	}
	if depth == 0 && via == nil {
		a.chainOf, a.top = map[*syntax.Stmt]int{}, map[*syntax.Stmt]bool{}
		for i, st := range f.Stmts {
			a.markChain(st, i)
		}
	}
	if a.pipeFrom == nil {
		a.pipeFrom = map[*syntax.Stmt]*syntax.Stmt{}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			a.pipeFrom[b.Y] = lastStmt(b.X)
		}
		return true
	})
	var walkErr error
	syntax.Walk(f, func(n syntax.Node) bool {
		if walkErr != nil {
			return false
		}
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		a.stmts++
		if id, ok := a.chainOf[st]; ok && id != a.chain {
			a.chain, a.loc = id, a.acc
		}
		if err := a.stmt(src, st, via, inherited, depth); err != nil {
			walkErr = err
			return false
		}
		return true
	})
	return walkErr
}

// markChain numbers the statements of a top-level `&&` chain.
func (a *analyzer) markChain(st *syntax.Stmt, id int) {
	a.chainOf[st] = id
	if st.Background || st.Negated || st.Coprocess {
		return
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		a.top[st] = true
	case *syntax.BinaryCmd:
		if c.Op == syntax.AndStmt {
			a.markChain(c.X, id)
			a.markChain(c.Y, id)
		}
	}
}

// lastStmt is the statement whose output a pipe's left side ends with.
func lastStmt(st *syntax.Stmt) *syntax.Stmt {
	for {
		b, ok := st.Cmd.(*syntax.BinaryCmd)
		if !ok {
			return st
		}
		st = b.Y
	}
}

// stmt records one statement: its file writes, and the simple command it
// holds, if any. Walk visits nested statements (substitutions, bodies)
// on its own.
func (a *analyzer) stmt(src string, st *syntax.Stmt, via []string, inherited []Assign, depth int) error {
	redirs := make([]Redirect, 0, len(st.Redirs))
	var stdin *string // a literal here-document or here-string
	stdinKnown := true
	for _, r := range st.Redirs {
		rd := Redirect{Op: r.Op.String(), Target: word(src, r.Word)}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		redirs = append(redirs, rd)
		if rd.IsWrite() {
			a.out.Writes = append(a.out.Writes, rd)
		}
		a.redirect(rd, r.Word != nil)
		if rd.Fd == "" || rd.Fd == "0" {
			switch rd.Op {
			case "<<", "<<-":
				stdin, stdinKnown = heredocText(r.Hdoc)
			case "<<<":
				if v, ok := rd.Target.Literal(); ok || !rd.Target.Dynamic {
					v += "\n"
					stdin, stdinKnown = &v, true
				} else {
					stdin, stdinKnown = nil, false
				}
			case "<", "<&", "<>":
				stdin, stdinKnown = nil, false
			}
		}
	}
	if stdin == nil && stdinKnown {
		if from, ok := a.pipeFrom[st]; ok {
			stdin, stdinKnown = printedText(src, from)
		}
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		for _, as := range cmd.Assigns {
			a.assigned(as.Name.Value)
		}
		if len(cmd.Args) == 0 {
			return nil // assignments only
		}
		c := Command{Redirects: redirs, Via: via, Source: stmtSource(src, st)}
		c.Assigns = append(c.Assigns, inherited...)
		for _, as := range cmd.Assigns {
			c.Assigns = append(c.Assigns, assign(src, as))
		}
		args := make([]Word, len(cmd.Args))
		for i, w := range cmd.Args {
			args[i] = word(src, w)
		}
		c.Args = a.unwrap(&c, args)
		return a.command(c, depth, stdinSource{text: stdin, known: stdinKnown}, a.top[st])
	case *syntax.DeclClause:
		for _, as := range cmd.Args {
			if as.Name != nil {
				a.assigned(as.Name.Value)
			}
		}
		c := Command{Redirects: redirs, Via: via, Source: stmtSource(src, st), Decl: true}
		c.Assigns = append(c.Assigns, inherited...)
		c.Args = []Word{{Value: cmd.Variant.Value, Source: cmd.Variant.Value}}
		for _, as := range cmd.Args {
			w := Word{Source: nodeSource(src, as)}
			w.Value = w.Source
			if as.Naked && as.Name == nil && as.Value != nil {
				w = word(src, as.Value)
			} else if as.Name != nil && as.Value != nil && !as.Naked {
				v := word(src, as.Value)
				w.Value, w.Dynamic, w.Pattern = as.Name.Value+"="+v.Value, v.Dynamic, v.Pattern
				if as.Append {
					w.Value = as.Name.Value + "+=" + v.Value
				}
			} else if as.Array != nil || as.Index != nil {
				w.Dynamic = true
			}
			c.Args = append(c.Args, w)
		}
		if changesLessSecure(c) {
			a.lessInsecure = true
		}
		a.out.Commands = append(a.out.Commands, c)
	}
	return nil
}

// command adds c, or the commands of the script it runs when c is a shell
// given a literal -c script or an eval of literal words.
func (a *analyzer) command(c Command, depth int, stdin stdinSource, top bool) error {
	name, ok := c.Name()
	if ok {
		if handled, err := a.special(&c, name, depth, stdin, top); handled || err != nil {
			return err
		}
	}
	if ok {
		if script, found := shellScript(name, c.Args); found {
			if script != nil {
				if err := a.script(*script, appendVia(c.Via, path.Base(name)+" -c"), c.Assigns, depth+1); err != nil {
					return err
				}
				return nil
			}
		} else if name == "eval" && len(c.Args) > 1 {
			parts := make([]string, 0, len(c.Args)-1)
			static := true
			for _, w := range c.Args[1:] {
				v, ok := w.Literal()
				static = static && ok
				parts = append(parts, v)
			}
			if static {
				if err := a.script(strings.Join(parts, " "), appendVia(c.Via, "eval"), c.Assigns, depth+1); err != nil {
					return err
				}
				return nil
			}
		}
	}
	if !c.Opaque {
		markInteractive(&c, stdin)
	}
	if changesLessSecure(c) {
		a.lessInsecure = true
	}
	a.out.Commands = append(a.out.Commands, c)
	a.files(c)
	return nil
}

func appendVia(via []string, s string) []string {
	out := make([]string, 0, len(via)+1)
	return append(append(out, via...), s)
}

// shells whose -c script is split.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// shellScript reports whether args run a shell with -c; script is the
// script when it is a literal, nil otherwise.
func shellScript(name string, args []Word) (script *string, found bool) {
	if !shells[path.Base(name)] || (strings.Contains(name, "/") && !standardDir(path.Dir(name))) {
		return nil, false
	}
	hasC := false
	for i := 1; i < len(args); i++ {
		v, ok := args[i].Literal()
		if !ok {
			if hasC {
				return nil, true
			}
			return nil, false
		}
		switch {
		case v == "--" || v == "-":
			if !hasC {
				return nil, false
			}
			continue
		case v == "-o" || v == "+o" || v == "-O" || v == "+O":
			i++ // option name
			continue
		case strings.HasPrefix(v, "--"):
			continue // --norc, --login, ...
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			if strings.ContainsRune(v[1:], 'c') && v[0] == '-' {
				hasC = true
			}
			continue
		}
		if !hasC {
			return nil, false // `bash script.sh`
		}
		return &v, true
	}
	return nil, false
}

func standardDir(dir string) bool {
	switch dir {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return true
	}
	return false
}

func stmtSource(src string, st *syntax.Stmt) string {
	start, end := st.Cmd.Pos().Offset(), st.Cmd.End().Offset()
	for _, r := range st.Redirs {
		if o := r.Pos().Offset(); o < start {
			start = o
		}
		if o := r.End().Offset(); o > end {
			end = o
		}
	}
	return slice(src, start, end)
}

func nodeSource(src string, n syntax.Node) string {
	return slice(src, n.Pos().Offset(), n.End().Offset())
}

func slice(src string, start, end uint) string {
	if int(end) > len(src) {
		end = uint(len(src))
	}
	if start > end {
		return ""
	}
	return src[start:end]
}

func assign(src string, as *syntax.Assign) Assign {
	out := Assign{Append: as.Append}
	if as.Name != nil {
		out.Name = as.Name.Value
	}
	switch {
	case as.Value != nil:
		out.Value = word(src, as.Value)
	case as.Array != nil || as.Index != nil:
		out.Value = Word{Source: nodeSource(src, as), Dynamic: true}
		out.Value.Value = out.Value.Source
	}
	return out
}

// word evaluates w statically.
func word(src string, w *syntax.Word) Word {
	if w == nil {
		return Word{}
	}
	out := Word{Source: nodeSource(src, w)}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v, pattern := unescapeUnquoted(p.Value)
			b.WriteString(v)
			out.Pattern = out.Pattern || pattern
		case *syntax.SglQuoted:
			if p.Dollar {
				// $'...' with C escapes: static, decoded by expand.
				v, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}})
				if err != nil {
					out.Dynamic = true
				}
				b.WriteString(v)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
				} else {
					out.Dynamic = true
				}
			}
		case *syntax.ExtGlob:
			out.Pattern = true
			b.WriteString(nodeSource(src, p))
		case *syntax.ProcSubst:
			out.Dynamic = true
			out.ProcSubst = len(w.Parts) == 1
		default: // ParamExp, CmdSubst, ArithmExp
			out.Dynamic = true
		}
	}
	if out.Dynamic {
		out.Value = out.Source
	} else {
		out.Value = b.String()
	}
	return out
}

// unescapeUnquoted removes the backslashes of an unquoted literal and
// reports whether it has unquoted glob or brace-expansion characters.
func unescapeUnquoted(s string) (string, bool) {
	var b strings.Builder
	pattern := false
	braceOpen := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
			}
			continue
		case '*', '?':
			pattern = true
		case '[':
			pattern = pattern || strings.IndexByte(s[i+1:], ']') >= 0
		case '{':
			braceOpen = i
		case '}':
			if braceOpen >= 0 {
				inner := s[braceOpen+1 : i]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					pattern = true
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String(), pattern
}

// unescapeDouble removes the backslashes that are special inside double
// quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

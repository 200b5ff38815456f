package shellcmd

import (
	"fmt"
	"path"
	"strings"
	"sync"
)

// FileUse is one path a command line reads or writes, as its words show
// it: a redirection's target, or an argument in a path position of a
// known program.
type FileUse struct {
	// Path is the path as written, quotes removed: relative (to Dir),
	// absolute, or starting with `~` or `~user` (tilde expansion is left to
	// the caller, who knows the home directories).
	Path string
	// Dir is the directory a relative Path is relative to, after the
	// line's cd (and env -C, git -C, tar -C): empty for the line's starting
	// directory, else relative to it, absolute, or starting with `~`.
	Dir string
	// Write is set when the command may create, change or remove the path.
	Write bool
	// Pattern is set when Path is a glob the shell expands.
	Pattern bool
	// Subtree is set when the command may touch everything below Path
	// (a recursive copy, grep -r, find, tar -x, rm -r).
	Subtree bool
	// GitConfig is set for the repository configuration `git config`
	// writes: it is the .git/config of the repository that holds Path.
	GitConfig bool
	// Program names the program, for messages.
	Program string
	// Guess is set for an argument of a program whose arguments' meaning
	// is not known (`make test`): it may name a file the program writes,
	// or be no path at all.
	Guess bool
}

// Unknown is a path a line touches that is only known when it runs: a
// computed word or one the shell turns into others in a path position, or
// a relative path after a cd whose target is not known.
type Unknown struct {
	Write bool
	// Why says what cannot be seen, for messages.
	Why string
}

// loc is where relative paths of a command lead: one of dirs (more than
// one when an earlier cd may have failed), each relative to the line's
// starting directory ("" is that directory itself), absolute, or starting
// with `~`.
type loc struct {
	dirs []string
	lost string // why the directory is not known; empty when it is
}

var startLoc = loc{dirs: []string{""}}

func (l loc) join(target string, tilde bool) loc {
	if strings.HasPrefix(target, "/") || tilde {
		return loc{dirs: []string{target}}
	}
	if l.lost != "" {
		return l
	}
	out := loc{}
	for _, d := range l.dirs {
		if d == "" {
			out.dirs = appendNew(out.dirs, path.Clean(target))
		} else {
			out.dirs = appendNew(out.dirs, path.Join(d, target))
		}
	}
	return out
}

// union is where relative paths lead when either l or m may hold.
func (l loc) union(m loc) loc {
	if l.lost != "" {
		return l
	}
	if m.lost != "" {
		return m
	}
	out := loc{dirs: append([]string(nil), l.dirs...)}
	for _, d := range m.dirs {
		out.dirs = appendNew(out.dirs, d)
	}
	return out
}

func appendNew(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

// harmlessOut are redirection targets that keep nothing; harmlessIn are
// inputs that are no file.
var (
	harmlessOut = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}
	harmlessIn  = map[string]bool{"/dev/null": true, "/dev/zero": true, "/dev/urandom": true, "/dev/random": true, "/dev/stdin": true, "-": true}
)

// isNetworkPath reports whether p is bash's /dev/tcp or /dev/udp, which
// opens a connection.
func isNetworkPath(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

// use records a word in a path position. prog names the program.
func (a *analyzer) use(w Word, l loc, write, subtree bool, prog string) {
	a.useAs(w, l, write, subtree, prog, false)
}

func (a *analyzer) useAs(w Word, l loc, write, subtree bool, prog string, guess bool) {
	if w.ProcSubst {
		return // <(...) is a pipe; its commands are analysed on their own
	}
	if v, ok := w.Literal(); ok && !write && harmlessIn[v] {
		return
	}
	if w.Dynamic {
		a.unknown(write, fmt.Sprintf("%s: the path %s is only known when it runs", prog, w.Source))
		return
	}
	v := w.Value
	if isNetworkPath(v) {
		a.out.Network = append(a.out.Network, v)
		return
	}
	tilde := strings.HasPrefix(w.Source, "~") && strings.HasPrefix(v, "~")
	if tilde {
		name, rest, _ := strings.Cut(v[1:], "/")
		switch name {
		case "+": // ~+ is the current directory
			if l.lost != "" {
				a.unknown(write, fmt.Sprintf("%s: %s is relative to a directory only known when it runs (%s)", prog, v, l.lost))
				return
			}
			v, tilde = path.Join(".", rest), false
		case "-": // ~- is $OLDPWD
			a.unknown(write, fmt.Sprintf("%s: %s is the previous directory, only known when it runs", prog, v))
			return
		}
	} else if strings.HasPrefix(v, "~") {
		v = "./" + v // a quoted ~ is a file named ~
	}
	if !tilde && !strings.HasPrefix(v, "/") && l.lost != "" {
		a.unknown(write, fmt.Sprintf("%s: %s is relative to a directory only known when it runs (%s)", prog, v, l.lost))
		return
	}
	if w.Pattern && (a.globsUnknown || strings.ContainsAny(v, "{}") || strings.Contains(v, "[!") || strings.Contains(v, "[^") || strings.ContainsAny(w.Source, "@!+(")) {
		a.unknown(write, fmt.Sprintf("%s: the pattern %s expands in ways only known when it runs", prog, w.Source))
		return
	}
	if tilde || strings.HasPrefix(v, "/") {
		a.out.Files = append(a.out.Files, FileUse{Path: v, Write: write, Pattern: w.Pattern, Subtree: subtree, Program: prog, Guess: guess})
		return
	}
	for _, dir := range l.dirs {
		a.out.Files = append(a.out.Files, FileUse{Path: v, Dir: dir, Write: write, Pattern: w.Pattern, Subtree: subtree, Program: prog, Guess: guess})
	}
}

func (a *analyzer) unknown(write bool, why string) {
	a.out.Unknowns = append(a.out.Unknowns, Unknown{Write: write, Why: why})
}

// redirect records the file a redirection reads or writes.
func (a *analyzer) redirect(r Redirect, hasWord bool) {
	if !hasWord {
		return
	}
	switch r.Op {
	case "<<", "<<-", "<<<":
		return // the text is the input, no file
	case "<&", ">&":
		if v, ok := r.Target.Literal(); ok && isFdWord(v) {
			return
		}
	}
	v, lit := r.Target.Literal()
	read := r.Op == "<" || r.Op == "<>" || r.Op == "<&"
	write := r.IsWrite()
	if lit && (write && harmlessOut[v] || read && !write && harmlessIn[v]) {
		return
	}
	if !read && !write {
		return
	}
	a.use(r.Target, a.loc, write, false, "redirection "+r.Op)
}

// cd follows a cd. One in a top-level `&&` chain moves the rest of the
// chain; the commands after the chain may run where it started, since the
// cd may fail. Any other change of directory (inside a subshell, pipeline,
// condition or script) makes later relative paths unknown.
func (a *analyzer) cd(c Command, top bool) {
	name, _ := c.Name()
	name = path.Base(name)
	var target *Word
	for i := 1; i < len(c.Args); i++ {
		w := c.Args[i]
		if v, ok := w.Literal(); ok && (v == "-L" || v == "-P" || v == "-e" || v == "-@" || v == "--") {
			continue
		}
		target = &c.Args[i]
		break
	}
	lose := func(why string) {
		if a.loc.lost == "" {
			a.loc = loc{lost: why}
		}
		if a.acc.lost == "" {
			a.acc = a.loc
		}
	}
	move := func(l loc) {
		a.loc = l
		a.acc = a.acc.union(l)
	}
	switch {
	case !top:
		lose(fmt.Sprintf("%q runs inside a subshell, pipeline, condition or script", c.Source))
	case name == "popd" || name == "pushd" && target == nil:
		lose(fmt.Sprintf("%q goes to a directory from the stack", c.Source))
	case target == nil:
		move(a.loc.join("~", true))
	case target.Dynamic || target.Pattern:
		lose(fmt.Sprintf("%q goes to a directory only known when it runs", c.Source))
	default:
		v := target.Value
		tilde := strings.HasPrefix(target.Source, "~") && strings.HasPrefix(v, "~")
		switch {
		case v == "-" || strings.HasPrefix(v, "+") || tilde && strings.HasPrefix(v, "~-"):
			lose(fmt.Sprintf("%q goes to a directory only known when it runs", c.Source))
		case tilde && strings.HasPrefix(v, "~+"):
			move(a.loc.join(strings.TrimPrefix(strings.TrimPrefix(v, "~+"), "/"), false))
		case (a.cdpath || a.cdableVars) && !tilde && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "."):
			lose(fmt.Sprintf("%q may go anywhere CDPATH or cdable_vars lead", c.Source))
		default:
			if !tilde && strings.HasPrefix(v, "~") {
				v = "./" + v
			}
			move(a.loc.join(v, tilde))
		}
	}
}

// noPaths are programs whose arguments name no file (built on first use,
// not when the program starts).
var noPaths = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, n := range strings.Fields(`echo printf true false : test [ exit return export declare local typeset
		readonly set unset shopt alias unalias trap hash kill sleep wait read type which command pwd cd pushd popd
		jobs fg bg help history times umask ulimit getopts shift break continue let eval seq date uname whoami id
		groups hostname nproc arch basename dirname printenv locale cal uptime free tty numfmt expr getconf env
		lscpu lsblk ps builtin caller compgen complete dirs disown enable logout mapfile readarray suspend`) {
		names[n] = true
	}
	return names
})

// recursivePrograms touch everything below a directory argument.
var recursivePrograms = map[string]bool{"find": true, "tar": true, "rsync": true, "du": true, "zip": true, "tree": true,
	"rg": true, "fd": true, "ag": true, "ack": true, "scp": true}

// writerShortArg are the short options that take a value, for the
// programs that write their operands.
var writerShortArg = map[string]string{"touch": "drt", "truncate": "sr", "shred": "ns", "mkdir": "m", "mkfifo": "m", "mknod": "m"}

// readerShortArg are the short options that take a value, for common
// programs that read their operands.
var readerShortArg = map[string]string{
	"grep": "efABCmDd", "egrep": "efABCmDd", "fgrep": "efABCmDd", "zgrep": "efABCmDd",
	"rg": "efgtTmABCMjE", "head": "nc", "tail": "ncs", "cut": "dfcb", "diff": "CUxXLIF", "ls": "IwT",
	"du": "dBtX", "nl": "bdfhilnsvw", "od": "AjNtw", "xxd": "cglosn", "uniq": "fsw", "jq": "f", "tree": "LPIo",
	"split": "abdlnt", "cmp": "in", "comm": "", "column": "cstoNRWHOE", "file": "emfFP", "stat": "cf",
	"fold": "w", "strings": "nte", "paste": "d", "join": "aejot12", "tac": "s", "readlink": "", "realpath": "",
}

// recursiveFlag are the programs whose -r (or -R) means recursive.
var recursiveFlag = map[string]bool{"rm": true, "cp": true, "chmod": true, "chown": true, "chgrp": true, "grep": true,
	"egrep": true, "fgrep": true, "zgrep": true, "ls": true, "rsync": true, "scp": true, "diff": true, "zip": true}

// grepLike programs take a pattern as their first operand.
var grepLike = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "zgrep": true, "rg": true, "ag": true, "ack": true}

// files records the paths command c touches.
func (a *analyzer) files(c Command) {
	if c.Decl {
		return
	}
	name, ok := c.Name()
	if !ok {
		return
	}
	l := a.loc
	for _, wr := range c.Wrappers {
		if n, _ := wr[0].Literal(); path.Base(n) == "env" {
			for _, v := range optionValues(wr[1:], 'C', "chdir") {
				l = a.chdir(l, v)
			}
		}
	}
	base := name
	if strings.Contains(name, "/") && standardDir(path.Dir(name)) {
		base = path.Base(name)
	}
	if noPaths()[base] {
		return
	}
	args := c.Args[1:]
	subtree := recursivePrograms[base] || recursiveFlag[base] && hasRecursiveFlag(base, args)
	switch base {
	case "cp", "mv", "install", "ln":
		a.copyLike(base, args, l, subtree)
	case "tee":
		p := parseOpts(args, "", []string{"output-error"})
		for _, w := range p.operands {
			a.use(w, l, true, false, base)
		}
	case "dd":
		a.dd(args, l)
	case "sed":
		a.sed(args, l)
	case "touch", "truncate", "rm", "rmdir", "unlink", "shred", "mkdir", "mkfifo", "mknod":
		p := parseOpts(args, writerShortArg[base], []string{"date", "reference", "size", "mode", "iterations", "random-source", "context"})
		for _, o := range p.opts {
			if o.has && (o.name == "r" && (base == "touch" || base == "truncate") || o.name == "reference") {
				a.use(o.value, l, false, false, base)
			}
		}
		for _, w := range p.operands {
			a.use(w, l, true, subtree, base)
		}
	case "chmod", "chown", "chgrp":
		p := parseOpts(args, "", []string{"reference", "from"})
		ops := p.operands
		if !p.has("reference") && len(ops) > 0 {
			ops = ops[1:] // the mode or owner
		}
		for _, w := range ops {
			a.use(w, l, true, subtree, base)
		}
	case "tar":
		a.tar(args, l)
	case "git":
		a.git(args, l)
	case "find":
		a.find(args, l)
	case "curl", "wget":
		a.download(base, args, l)
	case "source", ".", "sh", "bash", "dash", "zsh", "ksh":
		p := parseOpts(args, "oO", nil)
		if len(p.operands) > 0 && !p.has("c") && !p.has("s") {
			a.use(p.operands[0], l, false, false, base) // the script read
		}
	case "sort":
		p := parseOpts(args, "kotST", []string{"output", "key", "field-separator", "temporary-directory", "buffer-size", "files0-from"})
		for _, o := range p.opts {
			if o.name == "o" || o.name == "output" {
				a.use(o.value, l, true, false, base)
			}
		}
		for _, w := range p.operands {
			a.use(w, l, false, false, base)
		}
	default:
		a.generic(c, base, args, l, subtree)
	}
}

// dd notes the files dd reads (if=) and writes (of=).
func (a *analyzer) dd(args []Word, l loc) {
	for _, w := range args {
		switch {
		case strings.HasPrefix(w.Value, "if="):
			a.use(cutWord(w, 3), l, false, false, "dd")
		case strings.HasPrefix(w.Value, "of="):
			a.use(cutWord(w, 3), l, true, false, "dd")
		case w.Dynamic:
			a.unknown(true, fmt.Sprintf("dd: the operand %s is only known when it runs", w.Source))
		}
	}
}

// download notes the files curl or wget (base) writes (the output, a
// cookie jar, wget's directory) and reads (an upload, a config, wget's
// input list).
func (a *analyzer) download(base string, args []Word, l loc) {
	p := parseOpts(args, "oOTPiKdeHuUXAbcw", []string{"output", "output-document", "upload-file", "directory-prefix", "input-file", "config", "output-dir", "data", "header", "user", "cookie", "cookie-jar"})
	for _, o := range p.opts {
		switch {
		case base == "curl" && (o.name == "o" || o.name == "output" || o.name == "output-dir" || o.name == "c" || o.name == "cookie-jar"):
			a.use(o.value, l, true, false, base)
		case base == "wget" && (o.name == "O" || o.name == "output-document" || o.name == "P" || o.name == "directory-prefix"):
			a.use(o.value, l, true, o.name == "P" || o.name == "directory-prefix", base)
		case o.name == "T" || o.name == "upload-file" || o.name == "K" || o.name == "config" || base == "wget" && (o.name == "i" || o.name == "input-file"):
			a.use(o.value, l, false, false, base)
		}
	}
}

// chdir is where -C DIR (env, git, tar) leads from l.
func (a *analyzer) chdir(l loc, w Word) loc {
	if w.Dynamic || w.Pattern {
		return loc{lost: fmt.Sprintf("-C %s is only known when it runs", w.Source)}
	}
	tilde := strings.HasPrefix(w.Source, "~") && strings.HasPrefix(w.Value, "~")
	if tilde && (strings.HasPrefix(w.Value, "~+") || strings.HasPrefix(w.Value, "~-")) {
		return loc{lost: fmt.Sprintf("-C %s is only known when it runs", w.Source)}
	}
	return l.join(w.Value, tilde)
}

// generic judges the operands of a program not in the table: reads for a
// read-only program, reads and writes for any other. A computed operand of a
// read-only program is an unknown read; of another program it names
// nothing we can know (the program itself is judged by the rules).
func (a *analyzer) generic(c Command, base string, args []Word, l loc, subtree bool) {
	readOnly := c.IsReadOnly()
	p := parseOpts(args, readerShortArg[base], []string{"regexp", "file", "max-count", "after-context", "before-context", "context", "exclude", "include", "glob", "type", "lines", "bytes"})
	ops := p.operands
	if grepLike[base] && !p.has("e") && !p.has("f") && !p.has("regexp") && !p.has("file") && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, o := range p.opts {
		if o.has && !o.value.Dynamic && !o.value.Pattern && (strings.Contains(o.value.Value, "/") || o.name == "f" || o.name == "file") {
			a.useAs(o.value, l, !readOnly, false, base, !readOnly) // --file=/etc/x, -f patterns
		}
	}
	judged := 0
	for _, w := range ops {
		if !readOnly && (w.Dynamic || w.Pattern) {
			continue // a guess we cannot even read; the program is judged by the rules
		}
		judged++
		if readOnly {
			a.use(w, l, false, subtree, base)
			continue
		}
		// A program we do not know may read its arguments or write them.
		a.useAs(w, l, false, subtree, base, true)
		a.useAs(w, l, true, subtree, base, true)
	}
	if judged == 0 && subtree && len(ops) == 0 {
		// rg, grep -r, du, tree with no path search the current directory.
		a.useAs(Word{Value: ".", Source: "."}, l, !readOnly, true, base, !readOnly)
	}
}

// copyLike handles cp, mv, install and ln: the destination (last operand,
// or -t DIR) is written; the sources are read (cp, install, ln) or
// removed (mv).
func (a *analyzer) copyLike(base string, args []Word, l loc, subtree bool) {
	p := parseOpts(args, "tSgmo", []string{"target-directory", "suffix", "group", "mode", "owner"})
	srcWrite := base == "mv"
	if base == "install" && (p.has("d") || p.has("directory")) {
		for _, w := range p.operands {
			a.use(w, l, true, false, base)
		}
		return
	}
	ops := p.operands
	if t, ok := p.value("t", "target-directory"); ok {
		a.use(t, l, true, subtree, base)
	} else if len(ops) == 1 && base == "ln" {
		a.use(ops[0], l, false, false, base)
		if v, lit := ops[0].Literal(); lit {
			a.use(Word{Value: path.Base(v), Source: path.Base(v)}, l, true, false, base)
		} else {
			a.unknown(true, fmt.Sprintf("ln: the link made for %s is only known when it runs", ops[0].Source))
		}
		return
	} else if len(ops) > 0 {
		a.use(ops[len(ops)-1], l, true, subtree, base)
		ops = ops[:len(ops)-1]
	}
	for _, w := range ops {
		a.use(w, l, srcWrite, subtree, base)
	}
}

// sed writes its files with -i, and reads them otherwise.
func (a *analyzer) sed(args []Word, l loc) {
	p := parseOpts(args, "efl", []string{"expression", "file", "line-length"}, "i")
	inPlace := p.has("i") || p.has("in-place")
	ops := p.operands
	script := false
	for _, o := range p.opts {
		switch o.name {
		case "f", "file":
			a.use(o.value, l, false, false, "sed")
			script = true
		case "e", "expression":
			script = true
		}
	}
	if !script && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, w := range ops {
		a.use(w, l, inPlace, false, "sed")
	}
}

// tar: -C DIR moves where members are read from or extracted to; the
// archive (-f) is written when one is made; extraction writes everything
// below the directory.
func (a *analyzer) tar(args []Word, l loc) {
	// The first word may be an old-style cluster without a dash (`xzf a.tgz`).
	if len(args) > 0 && !strings.HasPrefix(args[0].Value, "-") && !args[0].Dynamic {
		args = append([]Word{{Value: "-" + args[0].Value, Source: "-" + args[0].Source}}, args[1:]...)
	}
	p := parseOpts(args, "fCTXbKNgLV", []string{"file", "directory", "files-from", "exclude-from", "blocking-factor", "starting-file", "newer", "listed-incremental", "tape-length", "label", "exclude", "transform", "xform", "owner", "group", "mode", "use-compress-program", "to-command", "info-script", "new-volume-script", "rsh-command"})
	create := p.has("c") || p.has("r") || p.has("u") || p.has("A") || p.has("create") || p.has("append") || p.has("update")
	extract := p.has("x") || p.has("extract") || p.has("get")
	dir := l
	for _, o := range p.opts {
		switch o.name {
		case "C", "directory":
			a.use(o.value, dir, extract, extract, "tar")
			dir = a.chdir(dir, o.value)
		case "f", "file":
			a.use(o.value, l, create, false, "tar")
		case "T", "files-from", "X", "exclude-from":
			a.use(o.value, l, false, false, "tar")
		case "to-command", "use-compress-program", "info-script", "new-volume-script", "rsh-command":
			a.unknown(true, "tar: --"+o.name+" runs a program")
		}
	}
	switch {
	case extract:
		a.use(Word{Value: ".", Source: "."}, dir, true, true, "tar")
	case create:
		for _, w := range p.operands {
			a.use(w, dir, false, true, "tar")
		}
	}
}

// git: -C DIR moves where it works; `git config` writes the repository's
// (or the user's, the system's, a named file's) configuration; `git clean`
// removes files below its paths; other subcommands' paths are read by the
// inspection commands and written by the others.
func (a *analyzer) git(args []Word, l loc) {
	i := 0
	gitDir := ""
	for ; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-C" && i+1 < len(args):
			i++
			l = a.chdir(l, args[i])
		case v == "-c" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--exec-path":
			if v == "--git-dir" && i+1 < len(args) {
				gitDir = args[i+1].Value
			}
			i++
		case strings.HasPrefix(v, "--git-dir="):
			gitDir = strings.TrimPrefix(v, "--git-dir=")
		case strings.HasPrefix(v, "-"):
		default:
			goto sub
		}
	}
	return
sub:
	sub, rest := args[i].Value, args[i+1:]
	switch sub {
	case "config":
		p := parseOpts(rest, "f", []string{"file", "blob", "default", "type", "comment"})
		for _, q := range []string{"get", "get-all", "get-regexp", "get-urlmatch", "l", "list", "get-color", "get-colorbool", "show-origin", "show-scope", "e", "edit"} {
			if p.has(q) {
				return
			}
		}
		if len(p.operands) == 1 && !p.has("unset") && !p.has("unset-all") && !p.has("remove-section") && !p.has("rename-section") {
			if n := p.operands[0].Value; n != "set" && n != "unset" {
				return // `git config name` reads a value
			}
		}
		switch f, ok := p.value("f", "file"); {
		case ok:
			a.use(f, l, true, false, "git config")
		case p.has("global"):
			a.use(Word{Value: "~/.gitconfig", Source: "~/.gitconfig"}, l, true, false, "git config")
		case p.has("system"):
			a.use(Word{Value: "/etc/gitconfig", Source: "/etc/gitconfig"}, l, true, false, "git config")
		case gitDir != "":
			a.use(Word{Value: path.Join(gitDir, "config"), Source: gitDir + "/config"}, l, true, false, "git config")
		default:
			if l.lost != "" {
				a.unknown(true, "git config: the repository is only known when it runs ("+l.lost+")")
				return
			}
			for _, dir := range l.dirs {
				a.out.Files = append(a.out.Files, FileUse{Path: ".", Dir: dir, Write: true, GitConfig: true, Program: "git config"})
			}
		}
		return
	case "clean":
		p := parseOpts(rest, "e", []string{"exclude"})
		if len(p.operands) == 0 {
			a.use(Word{Value: ".", Source: "."}, l, true, true, "git clean")
		}
		for _, w := range p.operands {
			a.use(w, l, true, true, "git clean")
		}
		return
	}
	readOnly := gitReadOnly(literalValues(args))
	p := parseOpts(rest, "mFCcSo", []string{"message", "file", "author", "date", "format", "pretty", "output"})
	for _, w := range p.operands {
		if w.Dynamic || isRevisionLike(w.Value) {
			continue
		}
		a.use(w, l, !readOnly, false, "git "+sub)
	}
}

// isRevisionLike skips words git takes as revisions or remotes, not paths.
func isRevisionLike(v string) bool {
	return strings.Contains(v, "..") && !strings.HasPrefix(v, "..") || strings.Contains(v, "://") || strings.HasPrefix(v, "HEAD") || strings.Contains(v, "@")
}

func literalValues(ws []Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}

// find reads below its starting points; -delete removes there, and a
// program run with -exec may change anything there; -fprint and -fls
// write a file.
func (a *analyzer) find(args []Word, l loc) {
	i := 0
	for ; i < len(args); i++ {
		v := args[i].Value
		if !args[i].Dynamic && (strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ",") {
			break
		}
	}
	starts, expr := args[:i], args[i:]
	del := false
	for j := 0; j < len(expr); j++ {
		switch v := expr[j].Value; {
		case v == "-delete", v == "-exec", v == "-execdir", v == "-ok", v == "-okdir":
			del = true // the program run on each file may change it
		case (v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf") && j+1 < len(expr):
			a.use(expr[j+1], l, true, false, "find")
		}
	}
	if len(starts) == 0 {
		starts = []Word{{Value: ".", Source: "."}}
	}
	for _, w := range starts {
		a.use(w, l, del, true, "find")
	}
}

// hasRecursiveFlag reports -r, -R or --recursive (and cp's -a).
func hasRecursiveFlag(base string, args []Word) bool {
	letters := "rR"
	if base == "cp" || base == "rsync" {
		letters = "rRa"
	}
	for _, w := range args {
		v := w.Value
		if v == "--" {
			return false
		}
		if v == "--recursive" || v == "--archive" || v == "--dereference-recursive" {
			return true
		}
		if len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], letters) {
			return true
		}
	}
	return false
}

func cutWord(w Word, n int) Word {
	if w.Dynamic {
		return w
	}
	src := w.Source
	if len(src) >= n {
		src = src[n:]
	}
	return Word{Value: w.Value[n:], Source: src, Pattern: w.Pattern}
}

// opt is one option of a command line.
type opt struct {
	name  string // the letter, or the long name without dashes
	value Word
	has   bool // value is set
}

type parsedArgs struct {
	opts     []opt
	operands []Word
}

func (p parsedArgs) has(name string) bool {
	for _, o := range p.opts {
		if o.name == name {
			return true
		}
	}
	return false
}

// value returns the last value given to any of names.
func (p parsedArgs) value(names ...string) (Word, bool) {
	var w Word
	found := false
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n && o.has {
				w, found = o.value, true
			}
		}
	}
	return w, found
}

// parseOpts splits args into options and operands, getopt style: short
// options in clusters (those in shortArg take a value, attached or the
// next word; those in optionalAttached take only an attached one), long
// options with `=value` or, for those in longArg, the next word; "--" ends
// the options. A computed word is an operand.
func parseOpts(args []Word, shortArg string, longArg []string, optionalAttached ...string) parsedArgs {
	var p parsedArgs
	optAttached := strings.Join(optionalAttached, "")
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case w.Dynamic || v == "-" || len(v) < 2 || v[0] != '-':
			p.operands = append(p.operands, w)
		case v == "--":
			p.operands = append(p.operands, args[i+1:]...)
			return p
		case strings.HasPrefix(v, "--"):
			name, val, eq := strings.Cut(v[2:], "=")
			o := opt{name: name}
			if eq {
				o.value, o.has = Word{Value: val, Source: val, Pattern: w.Pattern}, true
			} else if contains(longArg, name) && i+1 < len(args) {
				i++
				o.value, o.has = args[i], true
			}
			p.opts = append(p.opts, o)
		default:
			for j := 1; j < len(v); j++ {
				c := v[j]
				o := opt{name: string(c)}
				if strings.IndexByte(shortArg, c) >= 0 || strings.IndexByte(optAttached, c) >= 0 {
					rest := v[j+1:]
					switch {
					case rest != "":
						o.value, o.has = Word{Value: rest, Source: rest, Pattern: w.Pattern}, true
					case strings.IndexByte(shortArg, c) >= 0 && i+1 < len(args):
						i++
						o.value, o.has = args[i], true
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, o)
			}
		}
	}
	return p
}

package shellcmd

import (
	"path"
	"strings"
	"sync"
)

// Reads says what a program does with what is typed at its terminal (or
// written to its standard input): [ReadsData] for most programs, which
// take it as data; [ReadsShellLines] for a shell started with no script,
// which runs each line as a command line; [ReadsCode] for an interpreter
// or a program driven by commands (a REPL, an editor with a shell escape,
// a database client, a pager other than less), whose input is code no
// shell analysis can read.
type Reads int

const (
	// ReadsData: the program takes its input as data.
	ReadsData Reads = iota
	// ReadsShellLines: the program is a shell reading command lines.
	ReadsShellLines
	// ReadsCode: the program reads code or commands of its own language.
	ReadsCode
)

// interpreter describes how a language's interpreter is given its
// program: the options that carry the program text (script), those that
// take a value (value), and those that make it read code from the
// terminal even with a program (interactive).
type interpreter struct {
	script, value, interactive string // short option letters
	exit                       string // short options that print and exit (version, help)
	longScript, longValue      []string
	longInteractive            []string
}

// interpreters (built on first use, as the tables below) read code from their standard input when started with
// no program: no script operand and no option carrying one.
var interpreters = sync.OnceValue(func() map[string]interpreter {
	return map[string]interpreter{
		"python": {exit: "Vh", script: "cm", value: "WXQ", interactive: "i"},
		"pypy":   {exit: "Vh", script: "cm", value: "WXQ", interactive: "i"},
		"node": {exit: "vh", script: "ep", value: "rC", interactive: "i",
			longScript: []string{"eval", "print", "test", "run"}, longValue: []string{"require", "import", "loader", "experimental-loader", "conditions", "input-type", "env-file"},
			longInteractive: []string{"interactive"}},
		"ruby":    {exit: "h", script: "e", value: "rICEFx"},
		"perl":    {exit: "vh", script: "eE", value: "IMmx"},
		"php":     {exit: "vh", script: "rfSl", value: "cdz", interactive: "a"},
		"lua":     {exit: "v", script: "e", value: "l", interactive: "i"},
		"luajit":  {exit: "v", script: "e", value: "lj", interactive: "i"},
		"julia":   {exit: "vh", script: "eE", value: "LJ", interactive: "i", longScript: []string{"eval", "print"}, longValue: []string{"project", "load"}},
		"tclsh":   {},
		"wish":    {},
		"expect":  {script: "cf", interactive: "i"},
		"guile":   {script: "cs", value: "lLe", longValue: []string{"language"}},
		"ocaml":   {value: "I"},
		"Rscript": {script: "e"},
		"deno":    {},
		"bun":     {script: "e", longScript: []string{"eval", "print"}},
	}
})

// commandReaders are programs driven by commands read from the terminal
// whatever their arguments: REPLs, editors and tools with a shell escape
// (`:!`, `!`, `\!`, `.shell`), database clients, multiplexers and
// pagers other than less (which runs in its secure mode,
// LESSSECURE=1).
var commandReaders = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"ed": true, "red": true, "ex": true, "vi": true, "vim": true, "nvim": true, "view": true, "vimdiff": true, "gvim": true,
		"emacs": true, "nano": true, "pico": true, "joe": true,
		"gdb": true, "lldb": true, "pdb": true,
		"psql": true, "mysql": true, "mariadb": true, "sqlite3": true, "sqlite": true, "duckdb": true, "redis-cli": true, "mongosh": true,
		"dc": true, "ftp": true, "sftp": true, "mail": true, "mailx": true,
		"more": true, "most": true, "pg": true,
		"tmux": true, "screen": true,
	}
})

// repls are interpreters that read code from the terminal whatever
// their arguments.
var repls = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"irb": true, "pry": true, "ghci": true, "jshell": true, "erl": true, "iex": true,
		"scala": true, "clojure": true, "clj": true, "R": true, "sbcl": true}
})

// shellsTyped are the shells that run typed lines (a superset of those
// whose -c script is split).
var shellsTyped = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
		"ash": true, "fish": true, "tcsh": true, "csh": true, "yash": true, "posh": true, "rbash": true}
})

// programBase is the name a program is known by: a bare name, or the
// base of a path in a standard directory, with a version suffix dropped
// (python3.12, lua5.4, perl5.36). ok is false for a computed name or a
// program elsewhere (./python is not Python).
func programBase(c Command) (string, bool) {
	name, ok := c.Name()
	if !ok {
		return "", false
	}
	if strings.Contains(name, "/") {
		if !standardDir(path.Dir(name)) {
			return "", false
		}
		name = path.Base(name)
	}
	if trimmed := strings.TrimRight(name, "0123456789."); trimmed != name && trimmed != "" {
		if _, ok := interpreters()[trimmed]; ok {
			return trimmed, true
		}
	}
	if name == "python" || strings.HasPrefix(name, "python") && strings.Trim(name[len("python"):], "0123456789.") == "" {
		return "python", true
	}
	if name == "nodejs" {
		return "node", true
	}
	return name, true
}

// ReadsFromTerminal says what c does with what is typed at its terminal.
// A shell with no script and an interpreter with no program read it as
// code (the shell as command lines); `script`, `su` and the command
// readers ([commandReaders]) do whatever their arguments; everything
// else reads data.
func ReadsFromTerminal(c Command) Reads {
	base, ok := programBase(c)
	if !ok {
		return ReadsData
	}
	args := c.Args[1:]
	switch {
	case shellsTyped()[base]:
		if _, found := shellScript(c.Args[0].Value, c.Args); found {
			return ReadsData
		}
		if hasAnyOption(args, "i") || readsStdin(args) {
			return ReadsShellLines
		}
		return ReadsData
	case base == "script":
		// script runs $SHELL on a new terminal unless given a command.
		if hasAnyOption(args, "c") || hasLong(args, "command") {
			return ReadsData
		}
		return ReadsCode
	case base == "su", base == "machinectl":
		if hasAnyOption(args, "c") || hasLong(args, "command") {
			return ReadsData
		}
		return ReadsCode
	case commandReaders()[base], repls()[base]:
		return ReadsCode
	}
	spec, isInterp := interpreters()[base]
	if !isInterp {
		return ReadsData
	}
	if (base == "deno" || base == "bun") && len(args) > 0 && args[0].Value != "repl" {
		return ReadsData
	}
	if scriptless(spec, args) {
		return ReadsCode
	}
	return ReadsData
}

// scriptless reports whether an interpreter given args reads its program
// from the terminal: no option carries a program and no operand names a
// script (or the script is "-"), or an option asks for the REPL anyway.
func scriptless(spec interpreter, args []Word) bool {
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case w.Dynamic:
			return false // a computed script operand: judged as unknown elsewhere
		case v == "-" || v == "/dev/stdin" || v == "/dev/fd/0" || v == "/proc/self/fd/0":
			return true
		case v == "--":
			return i+1 >= len(args) || args[i+1].Value == "-"
		case strings.HasPrefix(v, "--"):
			name, _, eq := strings.Cut(v[2:], "=")
			switch {
			case name == "version" || name == "help":
				return false
			case contains(spec.longInteractive, name):
				return true
			case contains(spec.longScript, name):
				return false
			case contains(spec.longValue, name) && !eq:
				i++
			}
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				l := v[j]
				switch {
				case strings.IndexByte(spec.exit, l) >= 0:
					return false
				case strings.IndexByte(spec.interactive, l) >= 0:
					return true
				case strings.IndexByte(spec.script, l) >= 0:
					// The program follows, attached or as the next word;
					// a REPL option after it still wins.
					return hasAnyOption(args[i+1:], spec.interactive)
				case strings.IndexByte(spec.value, l) >= 0:
					if j == len(v)-1 {
						i++
					}
					j = len(v)
				}
			}
		default:
			// The script; options after it are the script's own.
			return false
		}
	}
	return true
}

// markInteractive makes a command that reads code as it runs opaque:
// a shell with no script reading its terminal (one whose standard input
// is a known text or a pipe was handled before: its script analysed, or
// made opaque), an interpreter with no program, and a command reader
// given its commands on standard input (`ed f <<< '!cmd'`). A command
// reader on the terminal is judged by what is typed into it (TaskInput).
func markInteractive(c *Command, stdin stdinSource) {
	switch ReadsFromTerminal(*c) {
	case ReadsShellLines:
		if stdin.text != nil || !stdin.known {
			return
		}
		c.Opaque, c.Reader = true, true
		c.OpaqueWhy = "a shell with no script runs whatever is typed into it"
	case ReadsCode:
		base, _ := programBase(*c)
		if _, interp := interpreters()[base]; !interp && !repls()[base] && stdin.text == nil && stdin.known {
			return
		}
		c.Opaque, c.Reader = true, true
		c.OpaqueWhy = "it reads code or commands as it runs, which no analysis of the command line can see"
	}
}

// changesLessSecure reports whether c changes, unsets or clears
// LESSSECURE, which keeps less from running commands: an assignment in
// front of it, env -u or env -i, or unset, export and the like naming it
// or a computed name.
func changesLessSecure(c Command) bool {
	for _, as := range c.Assigns {
		if as.Name == "LESSSECURE" {
			return true
		}
	}
	for _, wr := range c.Wrappers {
		if len(wr) == 0 || path.Base(wr[0].Value) != "env" {
			continue
		}
		for _, w := range wr[1:] {
			if w.Dynamic || strings.Contains(w.Value, "LESSSECURE") || w.Value == "--ignore-environment" ||
				len(w.Value) > 1 && w.Value[0] == '-' && w.Value[1] != '-' && strings.ContainsRune(w.Value, 'i') {
				return true
			}
		}
	}
	name, _ := c.Name()
	if base, ok := programBase(c); ok && base == "env" && hasAnyOption(c.Args[1:], "iu") {
		return true
	}
	switch name {
	case "unset", "export", "declare", "typeset", "readonly", "local", "read", "printf", "mapfile", "readarray", "getopts":
	default:
		if !c.Decl {
			return false
		}
	}
	for _, w := range c.Args[1:] {
		if w.Dynamic || strings.Contains(w.Value, "LESSSECURE") {
			return true
		}
	}
	return false
}

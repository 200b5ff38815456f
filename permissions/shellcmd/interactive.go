package shellcmd

import (
	"path"
	"regexp"
	"slices"
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
	if launchers()[base] {
		return launched(c, base)
	}
	switch {
	case shellsTyped()[base]:
		if _, found := shellScript(c.Args[0].Value, c.Args); found {
			return ReadsData
		}
		if hasAnyOption(args, "i") || readsStdin(args) || scriptIsTerminal(args) {
			return ReadsShellLines
		}
		return ReadsData
	case base == "script":
		// script runs $SHELL on a new terminal unless given a command,
		// which then reads what is typed as it would.
		if hasAnyOption(args, "c") || hasLong(args, "command") {
			return scriptCommand(args)
		}
		return ReadsCode
	case base == "su", base == "machinectl":
		if hasAnyOption(args, "c") || hasLong(args, "command") {
			return ReadsData
		}
		return ReadsCode
	case commandReaders()[base], repls()[base]:
		return ReadsCode
	case runsData(base, args):
		return ReadsCode
	case base == "python" && inspects(c):
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
			// The script; options after it are the script's own. The
			// terminal itself as the script (/dev/tty, /dev/fd/1) is
			// no script.
			return terminalPath(v)
		}
	}
	return true
}

// scriptCommand is what the command of `script -c CMD` does with what is
// typed: the strongest reading of CMD's commands; code when CMD is not a
// literal or does not parse.
func scriptCommand(args []Word) Reads {
	for i, w := range args {
		v := w.Value
		var cmd *Word
		switch {
		case v == "-c" || v == "--command":
			if i+1 < len(args) {
				cmd = &args[i+1]
			}
		case strings.HasPrefix(v, "--command="):
			cmd = &Word{Value: strings.TrimPrefix(v, "--command="), Dynamic: w.Dynamic}
		case len(v) > 2 && v[0] == '-' && v[1] != '-' && strings.IndexByte(v, 'c') > 0:
			if rest := v[strings.IndexByte(v, 'c')+1:]; rest != "" {
				cmd = &Word{Value: rest, Dynamic: w.Dynamic}
			} else if i+1 < len(args) {
				cmd = &args[i+1]
			}
		}
		if cmd == nil {
			continue
		}
		if cmd.Dynamic {
			return ReadsCode
		}
		s, err := Parse(cmd.Value)
		if err != nil {
			return ReadsCode
		}
		reads := ReadsData
		for _, c := range s.Commands {
			reads = max(reads, ReadsFromTerminal(c))
		}
		return reads
	}
	return ReadsCode
}

// launchers (built on first use) run the command their arguments name,
// beyond the wrappers the parser looks through: what is typed at the
// terminal goes to that command (setsid bash, flock f bash, exec bash,
// find . -exec bash \;, xargs sh -c).
var launchers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"sudo": true, "doas": true, "xargs": true, "exec": true, "find": true, "watch": true,
		"strace": true, "ltrace": true, "parallel": true, "flock": true, "chroot": true,
		"unshare": true, "setsid": true, "ionice": true, "chrt": true, "taskset": true,
		"nsenter": true, "runuser": true, "systemd-run": true, "fakeroot": true, "rlwrap": true,
		"proxychains": true, "proxychains4": true, "torsocks": true, "catchsegv": true, "valgrind": true,
		"dbus-launch": true, "xvfb-run": true, "firejail": true, "busybox": true, "prlimit": true,
		"cpulimit": true, "numactl": true, "setpriv": true, "unbuffer": true,
	}
})

// launched is what a launcher's command does with what is typed: the
// strongest reading of any command its argument list holds (each suffix
// of it, as deny rules match them); for xargs and parallel, which turn
// each typed line into arguments, any shell or interpreter they run reads
// it as code.
func launched(c Command, base string) Reads {
	reads := ReadsData
	for i := 1; i < len(c.Args); i++ {
		if base == "find" && !slices.Contains([]string{"-exec", "-execdir", "-ok", "-okdir"}, c.Args[i-1].Value) {
			continue // find's own words: only what -exec runs is a command
		}
		sub := c
		sub.Args = c.Args[i:]
		r := ReadsFromTerminal(sub)
		if sb, ok := programBase(sub); ok && (base == "xargs" || base == "parallel") && runsCode(sb) {
			r = ReadsCode
		}
		reads = max(reads, r)
	}
	return reads
}

// launchesInterpreter reports whether c, run by a launcher, runs an
// interpreter or a REPL that reads its program from the terminal
// (taskset -c 0 python3).
func launchesInterpreter(c Command, base string) bool {
	if !launchers()[base] {
		return false
	}
	for i := 1; i < len(c.Args); i++ {
		sub := c
		sub.Args = c.Args[i:]
		sb, ok := programBase(sub)
		if _, interp := interpreters()[sb]; ok && (interp || repls()[sb]) && ReadsFromTerminal(sub) == ReadsCode {
			return true
		}
	}
	return false
}

// runsCode reports whether the program base runs code it is given: a
// shell, an interpreter, a REPL or a program driven by commands.
func runsCode(base string) bool {
	_, interp := interpreters()[base]
	return interp || shellsTyped()[base] || repls()[base] || commandReaders()[base] || dataRunners()[base] != nil
}

// dataRunners (built on first use) are the programs that read data but
// can run what they read, each with the pattern its program text shows
// that with: sed's e command or s///e flag, awk's system() and pipes,
// perl's system, exec, backticks, qx and piped opens.
var dataRunners = sync.OnceValue(func() map[string]func(string) bool {
	awk := regexp.MustCompile(`system\s*\(|\|`).MatchString
	perl := regexp.MustCompile("system|exec|`|qx|open|eval|require|do\\s").MatchString
	return map[string]func(string) bool{
		"sed": sedRuns, "gsed": sedRuns,
		"awk": awk, "gawk": awk, "mawk": awk, "nawk": awk,
		"perl": perl,
	}
})

// sedRuns reports whether a sed script runs commands: an e command, or
// an s command with the e flag (GNU sed).
func sedRuns(script string) bool {
	for _, st := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		st = strings.TrimLeft(st, " \t0123456789$,!~+")
		for len(st) > 0 && (st[0] == '/' || st[0] == '\\') {
			// An address /re/ (or \cREc): skip to its end.
			d := st[0]
			if d == '\\' && len(st) > 1 {
				d, st = st[1], st[1:]
			}
			end := strings.IndexByte(st[1:], d)
			if end < 0 {
				return false
			}
			st = strings.TrimLeft(st[end+2:], " \t0123456789$,!~+I")
		}
		switch {
		case st == "e" || strings.HasPrefix(st, "e ") || strings.HasPrefix(st, "e\t"):
			return true
		case len(st) > 1 && st[0] == 's':
			d := string(st[1])
			parts := strings.SplitN(st[2:], d, 3)
			if len(parts) == 3 {
				flags := parts[2]
				if i := strings.IndexFunc(flags, func(r rune) bool { return !strings.ContainsRune("gpIiMme0123456789", r) }); i >= 0 {
					flags = flags[:i] // w FILE and what follows are not flags
				}
				if strings.ContainsRune(flags, 'e') {
					return true
				}
			}
		}
	}
	return false
}

// runsData reports whether base, given args, runs what it reads as data:
// its program text (an operand, or -e's) shows it can, or its program
// is read from the terminal (-f /dev/tty).
func runsData(base string, args []Word) bool {
	runs := dataRunners()[base]
	if runs == nil {
		return false
	}
	for i, w := range args {
		if w.Dynamic {
			return true // a computed program: unknown
		}
		v := w.Value
		if (v == "-f" || v == "--file") && i+1 < len(args) && terminalPath(args[i+1].Value) {
			return true
		}
		if !strings.HasPrefix(v, "-") && runs(v) {
			return true
		}
	}
	return false
}

// inspects reports whether Python is made interactive once its script
// ends by PYTHONINSPECT set in front of it.
func inspects(c Command) bool {
	for _, as := range c.Assigns {
		if as.Name == "PYTHONINSPECT" && (as.Value.Value != "" || as.Value.Dynamic) {
			return true
		}
	}
	return false
}

// terminalPath reports whether a script operand names the terminal (or
// a descriptor that may be it) rather than a file: /dev/tty, standard
// input, output or error, any /dev/fd/N or /proc/.../fd/N, a pseudo
// terminal, the console.
func terminalPath(v string) bool {
	switch {
	case v == "/dev/tty", v == "/dev/stdin", v == "/dev/stdout", v == "/dev/stderr", v == "/dev/console", v == "-":
		return true
	case strings.HasPrefix(v, "/dev/fd/"), strings.HasPrefix(v, "/dev/pts/"), strings.HasPrefix(v, "/dev/tty"):
		return true
	case strings.HasPrefix(v, "/proc/") && strings.Contains(v, "/fd/"):
		return true
	}
	return false
}

// scriptIsTerminal reports whether a shell's script operand (its first
// word that is no option) names the terminal: `bash /dev/tty` runs what
// is typed.
func scriptIsTerminal(args []Word) bool {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case args[i].Dynamic:
			return false
		case v == "-o" || v == "+o" || v == "-O" || v == "+O":
			i++
		case v == "--":
			return i+1 < len(args) && terminalPath(args[i+1].Value)
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
		default:
			return terminalPath(v)
		}
	}
	return false
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
		if _, interp := interpreters()[base]; !interp && !repls()[base] && !launchesInterpreter(*c, base) && stdin.text == nil && stdin.known {
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

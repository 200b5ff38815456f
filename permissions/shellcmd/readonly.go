package shellcmd

import (
	"path"
	"strings"
	"sync"
)

// IsReadOnly reports whether command only reads: it parses, and every
// simple command in it is a known read-only program used without its
// writing options, with a fixed program name, no assignments other than
// locale and display settings, and no output redirection except to
// /dev/null (or /dev/stdout, /dev/stderr). Anything else, including a line
// that does not parse, is not read-only.
func IsReadOnly(command string) bool {
	s, err := Parse(command)
	if err != nil {
		return false
	}
	return s.IsReadOnly()
}

// IsReadOnly reports whether every command of the script only reads and
// no redirection writes a file. A script with no command is not read-only.
func (s *Script) IsReadOnly() bool {
	if len(s.Commands) == 0 || len(s.Network) > 0 {
		return false
	}
	for _, u := range s.Unknowns {
		if u.Write {
			return false
		}
	}
	for _, f := range s.Files {
		if f.Write {
			return false
		}
	}
	for _, w := range s.Writes {
		if !w.Harmless() {
			return false
		}
	}
	for _, c := range s.Commands {
		if !c.IsReadOnly() {
			return false
		}
	}
	return true
}

// IsReadOnly reports whether this one command only reads (its own output
// redirections included).
func (c Command) IsReadOnly() bool {
	if c.Decl || c.Opaque {
		return false
	}
	for _, r := range c.Redirects {
		if r.IsWrite() && !r.Harmless() {
			return false
		}
	}
	for _, as := range c.Assigns {
		if !safeVar(as.Name) {
			return false
		}
	}
	for _, w := range c.Wrappers {
		if n, _ := w[0].Literal(); n == "nohup" {
			return false // nohup writes nohup.out when output is a terminal
		}
	}
	name, ok := c.Name()
	if !ok {
		return false
	}
	if strings.Contains(name, "/") {
		if !standardDir(path.Dir(name)) {
			return false // ./ls may be anything
		}
		name = path.Base(name)
	}
	check, known := readOnlyPrograms()[name]
	if !known {
		return false
	}
	if check == nil {
		return true
	}
	args := make([]string, 0, len(c.Args)-1)
	for _, w := range c.Args[1:] {
		v, ok := w.Literal()
		if !ok {
			return false // a computed word could be a writing option
		}
		args = append(args, v)
	}
	return check(args)
}

// safeVar reports whether assigning name for one command cannot make a
// read-only program run something else (PAGER, GIT_EXTERNAL_DIFF, PATH,
// LD_PRELOAD, BASH_ENV could).
func safeVar(name string) bool {
	if strings.HasPrefix(name, "LC_") {
		return true
	}
	switch name {
	case "LANG", "LANGUAGE", "TZ", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR",
		"COLUMNS", "LINES", "TERM", "GREP_COLOR", "GREP_COLORS", "LS_COLORS", "TIME_STYLE",
		"POSIXLY_CORRECT":
		return true
	}
	return false
}

// readOnlyPrograms maps a program to nil when every use only reads, or to
// a check of its (static) arguments. Built on first use, not when the
// program starts.
var readOnlyPrograms = sync.OnceValue(func() map[string]func(args []string) bool {
	readOnlyPrograms := map[string]func(args []string) bool{}
	for _, name := range strings.Fields(`
		cat head tail wc grep egrep fgrep zgrep ls stat pwd echo printf which type whoami id groups
		uname arch basename dirname realpath readlink du df true false test [ : cut tr nl od hexdump
		strings column comm cmp diff tac rev fold paste join seq sleep ps printenv locale cal uptime
		free nproc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum jq expand
		unexpand fmt cd tty lsblk lscpu getconf numfmt`) {
		readOnlyPrograms[name] = nil
	}
	readOnlyPrograms["find"] = findReadOnly
	readOnlyPrograms["git"] = gitReadOnly
	readOnlyPrograms["rg"] = without(nil, "pre")
	readOnlyPrograms["sort"] = shortOpts("o", "ktoST", "output", "compress-program")
	readOnlyPrograms["tree"] = without([]string{"-o"}, "")
	readOnlyPrograms["file"] = shortOpts("C", "emfFP", "compile")
	readOnlyPrograms["date"] = shortOpts("s", "sfdrI", "set")
	readOnlyPrograms["fd"] = shortOpts("xX", "edtEcjSo", "exec", "exec-batch")
	readOnlyPrograms["uniq"] = maxOperands(1, "fsw")
	readOnlyPrograms["xxd"] = maxOperands(1, "cglosn")
	readOnlyPrograms["hostname"] = func(args []string) bool {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") || a == "-F" || a == "-b" || strings.HasPrefix(a, "--file") || a == "--boot" {
				return false
			}
		}
		return true
	}
	readOnlyPrograms["command"] = func(args []string) bool {
		// Only `command -v/-V NAME` is left unwrapped: a lookup.
		return hasAnyOption(words(args), "vV")
	}
	readOnlyPrograms["env"] = func(args []string) bool {
		// env with no command prints the environment; -S is not analysed.
		return !hasAnyOption(words(args), "S") && !hasLong(words(args), "split-string")
	}
	return readOnlyPrograms
})

func words(args []string) []Word {
	out := make([]Word, len(args))
	for i, a := range args {
		out[i] = Word{Value: a, Source: a}
	}
	return out
}

// without refuses the exact arguments in exact and the long option long
// (with or without =value).
func without(exact []string, long string) func([]string) bool {
	return func(args []string) bool {
		for _, a := range args {
			if contains(exact, a) {
				return false
			}
			if long != "" && (a == "--"+long || strings.HasPrefix(a, "--"+long+"=")) {
				return false
			}
		}
		return true
	}
}

// shortOpts refuses the short options in bad (found in clusters, where
// letters of takesArg end the cluster) and the long options in longBad
// (which may be abbreviated by GNU getopt, so prefixes of at least 3
// characters are refused too).
func shortOpts(bad, takesArg string, longBad ...string) func([]string) bool {
	return func(args []string) bool {
		for _, a := range args {
			if a == "--" {
				return true
			}
			if strings.HasPrefix(a, "--") {
				name, _, _ := strings.Cut(a[2:], "=")
				for _, l := range longBad {
					if len(name) >= 3 && strings.HasPrefix(l, name) {
						return false
					}
				}
				continue
			}
			if len(a) < 2 || a[0] != '-' {
				continue
			}
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(bad, a[j]) >= 0 {
					return false
				}
				if strings.IndexByte(takesArg, a[j]) >= 0 {
					break
				}
			}
		}
		return true
	}
}

// maxOperands allows at most n operands (uniq and xxd write their second
// one); takesArg are the short options that take a separate argument.
func maxOperands(n int, takesArg string) func([]string) bool {
	return func(args []string) bool {
		count := 0
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a == "--" {
				count += len(args) - i - 1
				break
			}
			if len(a) > 1 && a[0] == '-' {
				if len(a) == 2 && strings.IndexByte(takesArg, a[1]) >= 0 {
					i++
				}
				continue
			}
			count++
		}
		return count <= n
	}
}

// findReadOnly refuses find's actions that run programs, delete or write.
func findReadOnly(args []string) bool {
	for _, a := range args {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls":
			return false
		}
		if strings.HasPrefix(a, "-fprint") {
			return false
		}
	}
	return true
}

// gitReadOnly allows git's inspection subcommands: status, log, diff,
// show, branch/tag (listing), rev-parse, ls-files, blame and the like.
func gitReadOnly(args []string) bool {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
			continue
		case a == "-c" || strings.HasPrefix(a, "--config-env") || strings.HasPrefix(a, "--exec-path"):
			return false // configuration can name programs to run
		case a == "--version":
			return true
		case strings.HasPrefix(a, "-"):
			continue // --no-pager, -P, --git-dir=..., --bare, ...
		}
		break
	}
	if i >= len(args) {
		return false // `git` alone prints help; nothing to allow
	}
	sub, rest := args[i], args[i+1:]
	for _, a := range rest {
		if a == "--output" || strings.HasPrefix(a, "--output=") || a == "--ext-diff" ||
			a == "-O" || strings.HasPrefix(a, "--open-files-in-pager") {
			return false
		}
	}
	switch sub {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "describe",
		"shortlog", "cat-file", "grep", "merge-base", "name-rev", "rev-list", "show-ref", "whatchanged",
		"for-each-ref", "count-objects", "check-ignore", "diff-tree", "diff-files", "diff-index",
		"var", "version", "show-branch", "cherry", "check-attr", "ls-remote":
		return true
	case "branch":
		return listingOnly(rest, "list", "l",
			[]string{"contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format"},
			[]string{"a", "all", "r", "remotes", "v", "vv", "verbose", "show-current", "i", "ignore-case",
				"color", "no-color", "column", "no-column", "abbrev", "no-abbrev", "omit-empty", "q", "quiet"})
	case "tag":
		return listingOnly(rest, "list", "l",
			[]string{"contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format"},
			[]string{"n", "i", "ignore-case", "color", "no-color", "column", "no-column", "omit-empty"})
	case "remote":
		if len(rest) == 0 {
			return true
		}
		switch rest[0] {
		case "-v", "--verbose", "show", "get-url":
			return true
		}
		return false
	case "stash", "worktree", "reflog", "notes", "submodule":
		if len(rest) == 0 {
			return sub == "worktree" || sub == "submodule" || sub == "reflog" // list/status/show
		}
		switch rest[0] {
		case "list", "show", "status":
			return true
		}
		return false
	case "config":
		for _, a := range rest {
			switch a {
			case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list":
				return true
			}
		}
		return false
	}
	return false
}

// listingOnly allows a git branch/tag invocation that lists: only known
// listing flags, and operands only after --list/-l (where they are
// patterns) or as the value of a flag in withValue.
func listingOnly(args []string, listLong, listShort string, withValue, flags []string) bool {
	listing := false
	for _, a := range args {
		if a == "--"+listLong || a == "-"+listShort {
			listing = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--"+listLong || a == "-"+listShort {
			continue
		}
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(a, "-")
			name, _, hasValue := strings.Cut(name, "=")
			if contains(withValue, name) {
				if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
				}
				continue
			}
			if strings.HasPrefix(name, "color") || strings.HasPrefix(name, "column") || strings.HasPrefix(name, "abbrev") {
				continue
			}
			if !contains(flags, name) {
				return false
			}
			continue
		}
		if !listing {
			return false // an operand creates a branch or tag
		}
	}
	return true
}

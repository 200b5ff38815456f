package shellcmd

import (
	"path"
	"strings"
)

// wrapper describes a program that runs the command given after its own
// options and operands.
type wrapper struct {
	// shortArg are the short options that take an argument; longArg the
	// long ones (without leading dashes).
	shortArg string
	longArg  []string
	// operands is how many operands come before the command (timeout's
	// DURATION).
	operands int
}

var wrappers = map[string]wrapper{
	"timeout": {shortArg: "ks", longArg: []string{"kill-after", "signal"}, operands: 1},
	"time":    {shortArg: "of", longArg: []string{"output", "format"}},
	"nice":    {shortArg: "n", longArg: []string{"adjustment"}},
	"nohup":   {},
	"stdbuf":  {shortArg: "ioe", longArg: []string{"input", "output", "error"}},
	"command": {},
	"builtin": {},
	"env":     {shortArg: "uCa", longArg: []string{"unset", "chdir", "argv0"}},
}

// unwrap looks through wrappers at the start of args, recording them (and
// env's assignments, time's output file) in c, and returns the wrapped
// command's argv. A wrapper without a command to run is itself the command.
func (a *analyzer) unwrap(c *Command, args []Word) []Word {
	for {
		name, ok := args[0].Literal()
		if !ok {
			return args
		}
		if strings.Contains(name, "/") && standardDir(path.Dir(name)) {
			name = path.Base(name) // /usr/bin/env, /usr/bin/timeout
		}
		spec, isWrapper := wrappers[name]
		if !isWrapper {
			return args
		}
		start := spec.commandStart(args)
		if name == "command" && hasAnyOption(args[1:start], "vV") {
			return args // command -v NAME looks NAME up, it does not run it
		}
		if name == "env" {
			if hasLong(args[1:start], "split-string") || hasAnyOption(args[1:start], "S") {
				return args // env -S splits a string we do not analyse
			}
			for start < len(args) {
				v, ok := args[start].Literal()
				eq := strings.IndexByte(v, '=')
				if !ok || eq <= 0 || !validName(v[:eq]) {
					break
				}
				c.Assigns = append(c.Assigns, Assign{Name: v[:eq], Value: Word{Value: v[eq+1:], Source: v[eq+1:]}})
				start++
			}
		}
		if name == "time" {
			for _, w := range optionValues(args[1:start], 'o', "output") {
				rd := Redirect{Op: "-o", Target: w}
				a.out.Writes = append(a.out.Writes, rd)
			}
		}
		if start >= len(args) {
			return args
		}
		c.Wrappers = append(c.Wrappers, args[:start])
		args = args[start:]
	}
}

// commandStart returns the index of the wrapped command in args (args[0]
// is the wrapper), len(args) when there is none. A computed word in the
// options is taken as an option when it starts with "-", else as the
// start of the command.
func (w wrapper) commandStart(args []Word) int {
	i := 1
	for i < len(args) {
		v := args[i].Value
		if v == "--" {
			i++
			break
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		if strings.HasPrefix(v, "--") {
			long := v[2:]
			if !strings.Contains(long, "=") && contains(w.longArg, long) {
				i++
			}
			i++
			continue
		}
		for j := 1; j < len(v); j++ {
			if strings.IndexByte(w.shortArg, v[j]) >= 0 {
				if j == len(v)-1 {
					i++ // the argument is the next word
				}
				break
			}
		}
		i++
	}
	i += w.operands
	if i > len(args) {
		i = len(args)
	}
	return i
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasAnyOption reports whether a short option cluster in opts holds one of
// the letters.
func hasAnyOption(opts []Word, letters string) bool {
	for _, w := range opts {
		v := w.Value
		if len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], letters) {
			return true
		}
	}
	return false
}

func hasLong(opts []Word, name string) bool {
	for _, w := range opts {
		if w.Value == "--"+name || strings.HasPrefix(w.Value, "--"+name+"=") {
			return true
		}
	}
	return false
}

// optionValues returns the values given to short option letter or long
// option long in opts.
func optionValues(opts []Word, letter byte, long string) []Word {
	var out []Word
	for i := 0; i < len(opts); i++ {
		v := opts[i].Value
		switch {
		case v == "--"+long && i+1 < len(opts):
			out = append(out, opts[i+1])
			i++
		case strings.HasPrefix(v, "--"+long+"="):
			val := strings.TrimPrefix(v, "--"+long+"=")
			out = append(out, Word{Value: val, Source: val, Dynamic: opts[i].Dynamic})
		case len(v) > 1 && v[0] == '-' && v[1] != '-':
			if j := strings.IndexByte(v, letter); j > 0 {
				if j == len(v)-1 {
					if i+1 < len(opts) {
						out = append(out, opts[i+1])
						i++
					}
				} else {
					val := v[j+1:]
					out = append(out, Word{Value: val, Source: val, Dynamic: opts[i].Dynamic})
				}
			}
		}
	}
	return out
}

func validName(s string) bool {
	for i, c := range s {
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return s != ""
}

package permissions

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
)

// CommandLine is what permission checks see of a Bash command line: the
// simple commands it may run and the files its redirections write, from
// the one shell analysis in package shellcmd.
type CommandLine struct {
	// Raw is the command line as given.
	Raw string
	// Err is set when the line does not parse: nothing in it is known,
	// and it is never allowed without asking.
	Err error
	// Commands are the simple commands, each with the texts rules are
	// matched against.
	Commands []CommandView
	// Files are the paths the line reads and writes as its words show
	// them (redirections, and the path arguments of known programs),
	// still relative to where the line runs: [CommandLine.Accesses]
	// resolves them.
	Files []shellcmd.FileUse
	// Unknowns are reads and writes of paths only known when the line
	// runs; each must be asked about.
	Unknowns []shellcmd.Unknown
	// Network lists the /dev/tcp and /dev/udp paths the line opens.
	Network []string
}

// CommandView is one simple command as rules see it.
type CommandView struct {
	Cmd shellcmd.Command
	// Known is false when the program is computed at run time, or the
	// command runs a script that is not a literal (`bash -c "$x"`,
	// `eval "$x"`): such a command is never allowed by a rule.
	Known bool
	// Text is the effective command (wrappers and assignments looked
	// through) with arguments quoted as the shell would need: what allow
	// rules match.
	Text string
	// denyTexts are further renderings deny and ask rules also match, so
	// a deny holds however the program is spelled or wrapped.
	denyTexts []string
}

// execLike programs run their arguments as a command; deny rules are also
// matched against every suffix of their argv (`xargs rm`, `sudo rm`,
// `find . -exec rm {} ;`).
var execLike = map[string]bool{
	"sudo": true, "doas": true, "xargs": true, "exec": true, "find": true, "watch": true,
	"strace": true, "ltrace": true, "parallel": true, "su": true, "flock": true, "chroot": true,
	"unshare": true, "setsid": true, "ionice": true, "chrt": true, "taskset": true, "script": true,
	"nsenter": true, "runuser": true, "systemd-run": true, "caffeinate": true, "fakeroot": true,
	"proxychains": true, "torsocks": true, "catchsegv": true, "valgrind": true, "gdb": true,
	"dbus-launch": true, "xvfb-run": true, "firejail": true, "busybox": true, "source": true, ".": true,
}

// AnalyzeCommand analyses a Bash command line for permission checks.
func AnalyzeCommand(raw string) *CommandLine {
	cl := &CommandLine{Raw: raw}
	s, err := shellcmd.Parse(raw)
	if err != nil {
		cl.Err = err
		return cl
	}
	for _, c := range s.Commands {
		cl.Commands = append(cl.Commands, viewCommand(c))
	}
	cl.Files, cl.Unknowns, cl.Network = s.Files, s.Unknowns, s.Network
	return cl
}

func viewCommand(c shellcmd.Command) CommandView {
	v := CommandView{Cmd: c, Known: true}
	name, ok := c.Name()
	if !ok || name == "" || c.RunsComputedScript() {
		v.Known = false
	}
	words := make([]string, len(c.Args))
	plain := make([]string, len(c.Args))
	for i, w := range c.Args {
		words[i] = quoteWord(w)
		plain[i] = w.Value
	}
	v.Text = strings.Join(words, " ")
	texts := []string{v.Text, strings.Join(plain, " "), strings.TrimSpace(c.Source)}
	// The program however it is spelled: /bin/rm, ./rm, \rm all deny as rm.
	if base := path.Base(plain[0]); base != plain[0] && base != "" {
		texts = append(texts, strings.Join(append([]string{base}, plain[1:]...), " "))
	}
	// With the wrappers, so a deny on a wrapper itself holds.
	if len(c.Wrappers) > 0 {
		var all []string
		for _, wr := range c.Wrappers {
			for _, w := range wr {
				all = append(all, w.Value)
			}
		}
		texts = append(texts, strings.Join(append(all, plain...), " "))
		for i := range c.Wrappers {
			var from []string
			for _, wr := range c.Wrappers[i:] {
				for _, w := range wr {
					from = append(from, w.Value)
				}
			}
			texts = append(texts, strings.Join(append(from, plain...), " "))
		}
	}
	// How it was reached: `bash -c 'rm x'` also denies as `bash -c ...`.
	for i := range c.Via {
		texts = append(texts, strings.Join(c.Via[i:], " ")+" "+v.Text)
	}
	// Programs that run their arguments.
	for i := 0; i < len(plain)-1; i++ {
		if !execLike[path.Base(plain[i])] {
			continue
		}
		for j := i + 1; j < len(plain); j++ {
			if strings.HasPrefix(plain[j], "-") || strings.Contains(plain[j], "=") {
				continue
			}
			rest := plain[j:]
			texts = append(texts, strings.Join(rest, " "))
			if base := path.Base(rest[0]); base != rest[0] {
				texts = append(texts, strings.Join(append([]string{base}, rest[1:]...), " "))
			}
		}
		break
	}
	v.denyTexts = texts
	return v
}

// quoteWord renders a word for rule matching: a static word quoted only
// when the shell would need it, a computed word as written.
func quoteWord(w shellcmd.Word) string {
	if w.Dynamic || w.Pattern {
		return w.Source
	}
	q, err := syntax.Quote(w.Value, syntax.LangBash)
	if err != nil {
		return w.Source
	}
	return q
}

// allowTexts are the texts an allow rule must match: the quoted form,
// and the plain form when no argument holds white space (so word
// boundaries cannot be faked by quoting).
func (v CommandView) allowTexts() []string {
	out := []string{v.Text}
	plain := make([]string, len(v.Cmd.Args))
	for i, w := range v.Cmd.Args {
		if strings.ContainsAny(w.Value, " \t\n") {
			return out
		}
		plain[i] = w.Value
	}
	if p := strings.Join(plain, " "); p != v.Text {
		out = append(out, p)
	}
	return out
}

// Suggestion is a Bash rule that allows exactly this command.
func (v CommandView) Suggestion() Rule {
	return Rule{Tool: "Bash", Specifier: escapeCommandSpec(v.Text)}
}

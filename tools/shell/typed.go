package shell

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
)

// What TaskInput types is judged as what the task does with it
// (docs/permissions.md, "What is typed"): a shell started with no script
// runs each line as a command line, so the lines are judged as Bash
// command lines; an interpreter, an editor or a database client reads
// code no analysis can see, so what is typed into it is judged as a
// command line that does not parse (deny and ask rules on commands make
// it a question); any other program reads data, and typing into it is
// judged as running the task's command.

// typedState is what has been typed into a task running a shell, as the
// judgement of the next input needs it.
type typedState struct {
	mu sync.Mutex
	// pending is the line typed but not yet entered: the next input is
	// judged with it in front.
	pending string
	// gen counts the inputs written, so an input judged before another
	// was written is refused rather than written after it.
	gen uint64
	// opaque says why everything typed from now on is unreadable (the
	// shell's state was changed in a way later lines depend on, or a
	// program that reads code was started in it), or is empty.
	opaque string
}

// taskReads says what the program a task's command line runs does with
// what is typed at its terminal: the strongest of its commands' answers;
// a line that does not parse, and a program only known when it runs,
// read code.
func taskReads(command string) (shellcmd.Reads, string) {
	s, err := shellcmd.Parse(command)
	if err != nil {
		return shellcmd.ReadsCode, "its command line could not be analysed"
	}
	reads, what := shellcmd.ReadsData, ""
	for _, c := range s.Commands {
		r := shellcmd.ReadsFromTerminal(c)
		if r == shellcmd.ReadsData && c.RunsComputedScript() {
			r = shellcmd.ReadsCode
		}
		if r > reads {
			reads, what = r, strings.TrimSpace(c.Source)
		}
	}
	return reads, what
}

// stateBuiltins change how a shell reads or runs the lines after the one
// that runs them: once one has run, later lines cannot be judged on
// their own.
var stateBuiltins = map[string]bool{
	"alias": true, "unalias": true, "hash": true, "shopt": true, "set": true, "enable": true, "source": true,
	".": true, "exec": true, "cd": true, "pushd": true, "popd": true, "declare": true, "typeset": true,
	"export": true, "readonly": true, "local": true, "unset": true, "read": true, "mapfile": true,
	"readarray": true, "printf": true, "eval": true, "let": true, "getopts": true, "builtin": true,
	"command": true, "complete": true, "compopt": true, "umask": true, "ulimit": true,
}

// promptVars (compiled on first use) run as code at every prompt of an interactive shell (or
// re-run history): a line that names one is unreadable at once.
var promptVars = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`PROMPT_COMMAND|PS[0-4]|\btrap\b|\bbind\b|\bfc\b|\bhistory\b|BASH_ENV|\bINPUTRC\b`)
})

// assigns finds a variable assignment or a function definition.
var assigns = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s;&|(!{])[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=|\(\s*\)|(^|[\s;&|])function\s`)
})

// typedJudgement is the judgement of one input typed into a shell.
type typedJudgement struct {
	// line is what the shell will have read once the input is typed:
	// the pending line in front of the input.
	line string
	// opaque says why the line cannot be judged as command lines; empty
	// when it can.
	opaque string
	// pending is the part of line after its last Enter; after is what
	// typedState.opaque becomes once the input is written.
	pending, after string
}

// judgeTyped judges input typed into a shell whose state is st.
func judgeTyped(st *typedState, input string) (typedJudgement, uint64) {
	st.mu.Lock()
	pending, gen, sticky := st.pending, st.gen, st.opaque
	st.mu.Unlock()
	j := typedJudgement{after: sticky}
	// Ctrl-C drops the line being typed; Ctrl-D at the start of a line
	// ends the shell. Neither runs anything.
	if input == "\x03" || input == "\x04" && pending == "" {
		j.line, j.after = "", sticky
		return j, gen
	}
	line := strings.ReplaceAll(pending+input, "\r", "\n")
	j.line = line
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		j.pending = line[i+1:]
	} else {
		j.pending = line
	}
	complete := strings.TrimSuffix(line, j.pending)
	switch {
	case sticky != "":
		j.opaque = sticky
	case strings.IndexFunc(line, func(r rune) bool { return (r < 0x20 || r > 0x7e) && r != '\n' }) >= 0:
		j.opaque = "it holds control characters or bytes beyond ASCII, which the shell's line editor acts on (moving, deleting, recalling or completing text)"
	case strings.ContainsRune(line, '!') || strings.HasPrefix(line, "^") || strings.Contains(line, "\n^"):
		j.opaque = "it holds ! or a leading ^, which an interactive shell's history expansion turns into other text"
	case promptVars().MatchString(line):
		j.opaque = "it names a variable or builtin an interactive shell runs as code at its prompt or from its history (" + promptVars().FindString(line) + ")"
	case continued(complete):
		j.opaque = "a line ends with a backslash, so the shell joins it to what is typed next"
	}
	if j.opaque != "" {
		j.after = "an earlier input typed into this shell could not be judged (" + j.opaque + ")"
		if sticky != "" {
			j.after = sticky
		}
		return j, gen
	}
	if strings.TrimSpace(complete) == "" {
		return j, gen
	}
	s, err := shellcmd.Parse(complete)
	if err != nil {
		// Incomplete: the shell waits for the rest (a quote, a loop).
		j.opaque = "the lines typed do not parse on their own (" + err.Error() + "), so the shell reads them with what comes next"
		j.after = "an earlier input left the shell in the middle of a command"
		return j, gen
	}
	if assigns().MatchString(complete) {
		j.after = "an earlier input set a variable or defined a function, which the lines after it may run"
	}
	for _, c := range s.Commands {
		name, _ := c.Name()
		switch {
		case c.Opaque:
			j.after = fmt.Sprintf("an earlier input started %q, which reads what is typed after it", strings.TrimSpace(c.Source))
		case c.Decl || stateBuiltins[name]:
			j.after = fmt.Sprintf("an earlier input ran %q, which changes how the shell reads the lines after it", strings.TrimSpace(c.Source))
		}
	}
	return j, gen
}

// continued reports whether a complete line ends with an odd number of
// backslashes: the shell joins it to the next.
func continued(complete string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(complete, "\n"), "\n") {
		n := len(l) - len(strings.TrimRight(l, `\`))
		if n%2 == 1 {
			return true
		}
	}
	return false
}

// typed records an input written into the shell: the next one is judged
// after it. It reports false when another input was written since this
// one was judged.
func (st *typedState) typed(gen uint64, j typedJudgement) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gen != gen {
		return false
	}
	st.gen++
	st.pending = j.pending
	if j.after != "" {
		st.opaque = j.after
	}
	return true
}

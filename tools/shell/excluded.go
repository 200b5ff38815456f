package shell

import (
	"strings"

	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
)

// ExcludedCommands are the commands that run outside the sandbox
// (sandbox.excludedCommands), each the start of a command line, e.g.
// "docker" or "git push". Whether a line runs unconfined is decided here,
// with the permission rules' parser, and handed to the sandbox as a fact
// (sandbox.Spec.Excluded): the sandbox itself does not read shell text.
type ExcludedCommands []string

// Match reports whether line runs only excluded programs: every simple
// command of the line (split and looked into as Bash permission rules
// are: across ;, &&, |, subshells, substitutions, bash -c and wrappers)
// starts with the words of one of the excluded commands. Such a line runs
// outside the sandbox; a line that also runs anything else, or that does
// not parse, runs confined.
func (e ExcludedCommands) Match(line string) bool {
	if len(e) == 0 {
		return false
	}
	script, err := shellcmd.Parse(line)
	if err != nil || len(script.Commands) == 0 {
		return false
	}
	for _, c := range script.Commands {
		if c.Opaque || !e.matchCommand(c) {
			return false
		}
	}
	return true
}

// matchCommand reports whether c's leading words are those of an
// excluded command.
func (e ExcludedCommands) matchCommand(c shellcmd.Command) bool {
	for _, ex := range e {
		ew := strings.Fields(ex)
		if len(ew) == 0 || len(c.Args) < len(ew) {
			continue
		}
		match := true
		for i, w := range ew {
			if v, ok := c.Args[i].Literal(); !ok || v != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

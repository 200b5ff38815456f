package shell

import (
	"os"
	"strings"

	"github.com/agent-mcp/agent-mcp/sandbox/proc"
)

// markerVar is set in every command's environment to "<session>/<task>",
// so the processes of a task can be told apart from any other (and found
// by tests and by the cleanup when a group id may have been reused).
const markerVar = "AGENT_MCP_TASK"

// nonInteractive are set for every command so that nothing waits for a
// person: editors exit at once (a commit without a message aborts),
// pagers print and return, git and package managers do not prompt.
var nonInteractive = map[string]string{
	"AGENT_MCP":           "1",
	"GIT_EDITOR":          "true",
	"EDITOR":              "true",
	"VISUAL":              "true",
	"GIT_SEQUENCE_EDITOR": "true",
	"PAGER":               "cat",
	"GIT_PAGER":           "cat",
	"MANPAGER":            "cat",
	"SYSTEMD_PAGER":       "",
	"LESS":                "-FRX",
	// less in its secure mode: no shell escape (!), pipe (|), editor (v),
	// input preprocessor (LESSOPEN) or log file, whatever is typed into
	// it (docs/permissions.md, "What is typed").
	"LESSSECURE":              "1",
	"GIT_TERMINAL_PROMPT":     "0",
	"GCM_INTERACTIVE":         "never",
	"DEBIAN_FRONTEND":         "noninteractive",
	"PIP_NO_INPUT":            "1",
	"HOMEBREW_NO_AUTO_UPDATE": "1",
}

// commandEnv is the environment of a command: of the server's, the
// variables a shell and a build need ([proc.CommandEnv]) and those allow
// (sandbox.env.allow) names, never [proc.SecretEnv]; with the
// non-interactive settings, TERM (dumb on a pipe, xterm-256color on a
// pseudo-terminal) and the task marker.
func commandEnv(marker string, pty bool, allow []string) []string {
	set := map[string]string{}
	for k, v := range nonInteractive {
		set[k] = v
	}
	set["TERM"] = "dumb"
	if pty {
		set["TERM"] = "xterm-256color"
		// Python 3.13's REPL redraws its line with escape sequences;
		// the basic one prints plain prompts TaskInput can wait for.
		set["PYTHON_BASIC_REPL"] = "1"
	}
	set[markerVar] = marker
	// SSH must not ask for a password or a host key confirmation.
	if os.Getenv("GIT_SSH_COMMAND") == "" {
		set["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
	}
	base := proc.Allowed(os.Environ(), allow)
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := set[k]; override {
			continue
		}
		// A parent's BASH_ENV would run a file before every command;
		// CDPATH, BASHOPTS, SHELLOPTS and GLOBIGNORE would make cd and
		// globs lead elsewhere than the permission check saw.
		if k == "BASH_ENV" || k == "ENV" || k == "CDPATH" || k == "BASHOPTS" || k == "SHELLOPTS" || k == "GLOBIGNORE" {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

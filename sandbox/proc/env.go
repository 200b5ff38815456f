package proc

import (
	"slices"
	"strings"
)

// SecretEnv are agent-mcp's own secrets, removed from the environment of
// every command, background task and language server: the HTTP server's
// bearer tokens, the keys of the model providers chat talks to, and the
// web search key. A command that printed them (env) could act as another
// client of the same server, or spend the operator's provider account.
// The list is documented in docs/tools.md (Bash).
var SecretEnv = []string{
	"AGENT_MCP_TOKEN",
	"AGENT_MCP_CLIENT_TOKENS",
	"ANTHROPIC_API_KEY",
	"OPENAI_API_KEY",
	"OPENROUTER_API_KEY",
	"BRAVE_API_KEY",
}

// IsSecret reports whether the variable named name is one of SecretEnv.
func IsSecret(name string) bool { return slices.Contains(SecretEnv, name) }

// Scrub returns env (NAME=value entries) without agent-mcp's own secrets
// and without the names drop reports true for (nil drops nothing more).
func Scrub(env []string, drop func(name string) bool) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if IsSecret(k) || (drop != nil && drop(k)) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

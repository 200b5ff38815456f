package cli

import (
	"os"
	"strings"

	"github.com/agent-mcp/agent-mcp/internal/redact"
	"github.com/agent-mcp/agent-mcp/sandbox/proc"
)

// resultRedactor is what every tool result is redacted with (docs/tools.md,
// Secrets in results): the values of the server's environment that are
// secret by name ([redact.LooksSecret]) or agent-mcp's own
// ([proc.SecretEnv]), the passwords of URLs in it, and extra (the serve
// tokens, taken out of the environment before the pipeline is built).
func resultRedactor(extra ...redact.Secret) *redact.Redactor {
	return redact.New(append(redact.FromEnv(os.Environ(), proc.SecretEnv), extra...))
}

// tokenSecrets are the serve tokens as secrets to redact.
func tokenSecrets(t serveTokens) []redact.Secret {
	out := []redact.Secret{{Name: tokenEnv, Value: t.token}}
	for _, c := range t.client {
		name, tok, _ := strings.Cut(c, "=")
		out = append(out, redact.Secret{Name: clientTokensEnv + " (" + name + ")", Value: tok})
	}
	return out
}

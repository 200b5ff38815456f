package cli

import (
	"fmt"
	"os"
	"slices"
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

// redactLine says, for doctor, which variables' values
// every tool result is redacted of, and of those which a command is
// given (sandbox.env.allow names them) and which it never sees. It names
// the variables, never their values.
func redactLine(env, allow []string) string {
	secrets := redact.FromEnv(env, proc.SecretEnv)
	if len(secrets) == 0 {
		return "results: no variable of this environment is secret by its name (…TOKEN, …SECRET, …KEY, …PASSWORD) or holds a URL's password: nothing to redact"
	}
	var given, withheld []string
	for _, s := range secrets {
		if len(proc.Allowed([]string{s.Name + "=x"}, allow)) > 0 {
			given = append(given, s.Name)
		} else {
			withheld = append(withheld, s.Name)
		}
	}
	slices.Sort(given)
	slices.Sort(withheld)
	var b strings.Builder
	fmt.Fprintf(&b, "results: the values of %d variables are redacted from every tool result", len(secrets))
	if len(given) > 0 {
		fmt.Fprintf(&b, "; given to commands (sandbox.env.allow): %s", strings.Join(given, ", "))
	}
	if len(withheld) > 0 {
		fmt.Fprintf(&b, "; withheld from commands: %s", strings.Join(withheld, ", "))
	}
	return b.String()
}

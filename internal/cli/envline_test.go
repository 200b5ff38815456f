package cli

import (
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions/settings"
)

// TestEnvLine: `sandbox check` says how much of the environment reaches a
// command and names what it withholds, sorted.
func TestEnvLine(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "HOME=/h", "HF_TOKEN=x", "GITHUB_TOKEN=y", "MYAPP_KEY=z"}
	got := envLine(env, []string{"MYAPP_*"})
	for _, want := range []string{"3 of this environment's 5 variables reach a command", "the 1 names of sandbox.env.allow", "withheld: GITHUB_TOKEN, HF_TOKEN"} {
		if !strings.Contains(got, want) {
			t.Errorf("envLine = %q, want it to say %q", got, want)
		}
	}
}

// TestRedactLine: doctor names the variables whose values are redacted
// from results, split by whether a command is given them, and never
// shows a value.
func TestRedactLine(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "HF_TOKEN=hf_0123456789", "GITHUB_TOKEN=ghp_0123456789", "MYAPP_KEY=zzzzzzzzzz",
		"ANTHROPIC_API_KEY=sk-ant-0123456789", "SHORT_TOKEN=1", "DATABASE_URL=postgres://u:pw0123456789@db/x"}
	got := redactLine(env, []string{"MYAPP_*"})
	for _, want := range []string{"the values of 5 variables are redacted", "given to commands (sandbox.env.allow): MYAPP_KEY",
		"withheld from commands: ANTHROPIC_API_KEY, DATABASE_URL, GITHUB_TOKEN, HF_TOKEN"} {
		if !strings.Contains(got, want) {
			t.Errorf("redactLine = %q, want it to say %q", got, want)
		}
	}
	if strings.Contains(got, "0123456789") || strings.Contains(got, "SHORT_TOKEN") {
		t.Errorf("redactLine = %q: a value, or a variable too short to redact", got)
	}
	if got := redactLine([]string{"PATH=/bin"}, nil); !strings.Contains(got, "nothing to redact") {
		t.Errorf("redactLine with no secret = %q", got)
	}
}

// TestCredentialLines: doctor lists each sandbox.credentials entry as
// denied or masked (toward which hosts), and the secret-looking
// variables no entry names as left to the allow-list; never a value.
func TestCredentialLines(t *testing.T) {
	t.Parallel()
	s := &settings.Settings{}
	s.Sandbox.CredentialEnvs = []settings.Credential{{Name: "GITHUB_TOKEN", Mode: "mask", InjectHosts: []string{"api.github.com"}}, {Name: "AWS_SECRET_ACCESS_KEY", Mode: "deny"}}
	s.Sandbox.CredentialFiles = []settings.Credential{{Path: "/nonexistent/hosts.yml", Mode: "mask"}}
	env := []string{"GITHUB_TOKEN=ghp_0123456789abcdef", "NPM_TOKEN=npm_0123456789abcdef", "PATH=/bin"}
	got := strings.Join(credentialLines(s, env), "\n")
	for _, want := range []string{
		"credential GITHUB_TOKEN (variable, set): masked; a command sees a sentinel, the proxy injects the value toward api.github.com",
		"credential AWS_SECRET_ACCESS_KEY (variable, not set here): denied",
		"credential /nonexistent/hosts.yml (file, missing): masked",
		"left to the environment allow-list (withheld unless sandbox.env.allow names them; redacted from results): NPM_TOKEN",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("credentialLines =\n%s\nwant it to say %q", got, want)
		}
	}
	if strings.Contains(got, "0123456789") {
		t.Errorf("credentialLines shows a value:\n%s", got)
	}
}

package cli

import (
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/internal/redact"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/sandbox/egress"
)

// credentialOptions gives the sandbox the settings' sandbox.credentials
// and the proxy's TLS termination: the CA tlsTerminate names, and the
// further roots $AGENT_MCP_EGRESS_ROOTS names for the hosts reached
// after termination.
func (w *workspaceFlags) credentialOptions(opts *sandbox.Options, s *settings.Settings) error {
	envs, files := credentialEntries(s)
	opts.CredentialEnvs, opts.CredentialFiles = envs, files
	opts.AllowPlaintextInject = s.Sandbox.AllowPlaintextInject
	opts.TLSTerminate = s.Sandbox.TLSTerminate
	if s.Sandbox.TLSCACert != "" {
		ca, err := egress.LoadCA(s.Sandbox.TLSCACert, s.Sandbox.TLSCAKey)
		if err != nil {
			return fmt.Errorf("sandbox.network.tlsTerminate: %w", err)
		}
		opts.TLSCA = ca
	}
	if w.env.roots != "" {
		pem, err := os.ReadFile(w.env.roots)
		if err != nil {
			return fmt.Errorf("%s: %w", sandbox.RootsEnv, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: %s holds no PEM certificate", sandbox.RootsEnv, w.env.roots)
		}
		opts.UpstreamRoots = pool
	}
	return nil
}

// credentialEntries are the settings' credentials as the sandbox takes
// them.
func credentialEntries(s *settings.Settings) ([]sandbox.CredentialEnv, []sandbox.CredentialFile) {
	var envs []sandbox.CredentialEnv
	for _, c := range s.Sandbox.CredentialEnvs {
		envs = append(envs, sandbox.CredentialEnv{Name: c.Name, Mode: sandbox.CredentialMode(c.Mode), Extract: c.Extract,
			OnNoMatch: sandbox.NoMatch(c.OnExtractNoMatch), InjectHosts: c.InjectHosts})
	}
	var files []sandbox.CredentialFile
	for _, c := range s.Sandbox.CredentialFiles {
		files = append(files, sandbox.CredentialFile{Path: c.Path, Mode: sandbox.CredentialMode(c.Mode), Extract: c.Extract,
			MaskDuplicates: c.MaskDuplicates, OnNoMatch: sandbox.NoMatch(c.OnExtractNoMatch), InjectHosts: c.InjectHosts})
	}
	return envs, files
}

// credentialSecrets are the real values of the settings' credentials,
// and the values and variables the redact object names, to redact from
// every result.
func credentialSecrets(s *settings.Settings) []redact.Secret {
	envs, files := credentialEntries(s)
	var out []redact.Secret
	for _, p := range sandbox.CredentialSecrets(envs, files, os.Environ()) {
		out = append(out, redact.Secret{Name: p[0], Value: p[1]})
	}
	for i, v := range s.RedactValues {
		out = append(out, redact.Secret{Name: fmt.Sprintf("redact.values[%d]", i), Value: v})
	}
	for _, n := range s.RedactEnvVars {
		if v := os.Getenv(n); v != "" {
			out = append(out, redact.Secret{Name: n, Value: v})
		}
	}
	return out
}

// redactPatterns are the settings' redact.patterns.
func redactPatterns(s *settings.Settings) []redact.Pattern {
	var out []redact.Pattern
	for _, p := range s.RedactPatterns {
		out = append(out, redact.Pattern{Name: p.Name, Re: p.Re})
	}
	return out
}

// credentialLines say, for doctor, which credentials the settings name
// and what a sandboxed command gets of each: denied, masked (with the
// hosts it is injected toward) or, for a variable the settings do not
// name, left (given when sandbox.env.allow names it). Names only, never
// values.
func credentialLines(s *settings.Settings, env []string) []string {
	var out []string
	has := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		has[k] = true
	}
	hosts := func(h []string) string {
		if len(h) == 0 {
			return "the allowed domains"
		}
		return strings.Join(h, ", ")
	}
	for _, c := range s.Sandbox.CredentialEnvs {
		state := "not set here"
		if has[c.Name] {
			state = "set"
		}
		switch c.Mode {
		case "mask":
			out = append(out, fmt.Sprintf("credential %s (variable, %s): masked; a command sees a sentinel, the proxy injects the value toward %s", c.Name, state, hosts(c.InjectHosts)))
		default:
			out = append(out, fmt.Sprintf("credential %s (variable, %s): denied; a command does not get it", c.Name, state))
		}
	}
	for _, c := range s.Sandbox.CredentialFiles {
		state := "missing"
		if _, err := os.Stat(c.Path); err == nil {
			state = "present"
		}
		switch c.Mode {
		case "mask":
			out = append(out, fmt.Sprintf("credential %s (file, %s): masked; a command reads a copy with sentinels (namespaces layer), the proxy injects the values toward %s", c.Path, state, hosts(c.InjectHosts)))
		default:
			out = append(out, fmt.Sprintf("credential %s (file, %s): denied; a command cannot read it", c.Path, state))
		}
	}
	named := func(n string) bool {
		return slices.ContainsFunc(s.Sandbox.CredentialEnvs, func(c settings.Credential) bool { return c.Name == n })
	}
	var left []string
	for _, sec := range redact.FromEnv(env, nil) {
		if !named(sec.Name) && !slices.Contains(left, sec.Name) {
			left = append(left, sec.Name)
		}
	}
	slices.Sort(left)
	if len(left) > 0 {
		out = append(out, "credentials left to the environment allow-list (withheld unless sandbox.env.allow names them; redacted from results): "+strings.Join(left, ", "))
	}
	return out
}

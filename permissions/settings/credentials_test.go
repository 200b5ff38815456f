package settings

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad_sandboxCredentials: sandbox.credentials is read with Claude
// Code's keys; a bad entry is refused naming the field; an untrusted
// workspace keeps its denials but not its masks; a project's
// allowPlaintextInject and tlsTerminate are ignored, as Claude Code
// ignores them.
func TestLoad_sandboxCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, cfg, proj := filepath.Join(dir, "home"), filepath.Join(dir, "cfg"), filepath.Join(dir, "proj")
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"sandbox": {
		"network": {"allowedDomains": ["api.github.com"], "tlsTerminate": {}},
		"credentials": {
			"envVars": [{"name": "GITHUB_TOKEN", "mode": "mask", "injectHosts": ["api.github.com"]}, {"name": "AWS_SECRET_ACCESS_KEY", "mode": "deny"}],
			"files": [{"path": "~/.config/gh/hosts.yml", "mode": "mask", "extract": "oauth_token: (\\S+)", "maskDuplicates": true, "onExtractNoMatch": "deny"},
			          {"path": "~/.jwt", "mode": "mask", "decode": "jwt"}],
			"allowPlaintextInject": true}}}`)
	writeFile(t, filepath.Join(proj, ".claude/settings.json"), `{"sandbox": {
		"network": {"tlsTerminate": {"caCertPath": "x", "caKeyPath": "y"}},
		"credentials": {"envVars": [{"name": "NPM_TOKEN", "mode": "mask"}, {"name": "DB_PASSWORD", "mode": "deny"}], "allowPlaintextInject": false}}}`)
	loc := Locations{Home: home, ConfigDir: cfg, Project: proj}
	s, err := Load(loc)
	if err != nil {
		t.Fatal(err)
	}
	sb := s.Sandbox
	var envs []string
	for _, e := range sb.CredentialEnvs {
		envs = append(envs, e.Name+":"+e.Mode)
	}
	if got := strings.Join(envs, " "); got != "GITHUB_TOKEN:mask AWS_SECRET_ACCESS_KEY:deny DB_PASSWORD:deny" {
		t.Errorf("envVars = %s (the untrusted workspace's mask must be left out, its deny kept)", got)
	}
	if !strings.Contains(strings.Join(s.Ignored, "\n"), "credentials (mode mask)") {
		t.Errorf("Ignored %q does not name the workspace's mask", s.Ignored)
	}
	if len(sb.CredentialFiles) != 2 {
		t.Fatalf("files = %+v", sb.CredentialFiles)
	}
	f := sb.CredentialFiles[0]
	if f.Path != filepath.Join(home, ".config/gh/hosts.yml") || f.Extract == nil || !f.MaskDuplicates || f.OnExtractNoMatch != "deny" {
		t.Errorf("files[0] = %+v", f)
	}
	if sb.CredentialFiles[1].Mode != "deny" || !strings.Contains(strings.Join(sb.Warnings, "\n"), "decode") {
		t.Errorf("a decode entry: %+v, warnings %q; want it denied and said", sb.CredentialFiles[1], sb.Warnings)
	}
	if !sb.AllowPlaintextInject || !sb.TLSTerminate || sb.TLSCACert != "" {
		t.Errorf("allowPlaintextInject %v tlsTerminate %v %q: the project's must not count", sb.AllowPlaintextInject, sb.TLSTerminate, sb.TLSCACert)
	}
	for _, tt := range []struct{ entry, field string }{
		{`"envVars": [{"name": "GITHUB-TOKEN", "mode": "mask"}]`, "sandbox.credentials.envVars[0].name"},
		{`"envVars": [{"name": "A", "mode": "hide"}]`, "sandbox.credentials.envVars[0].mode"},
		{`"envVars": [{"name": "A", "mode": "mask", "injectHosts": ["https://x.com/"]}]`, "sandbox.credentials.envVars[0].injectHosts[0]"},
		{`"files": [{"path": "", "mode": "deny"}]`, "sandbox.credentials.files[0].path"},
		{`"files": [{"path": "~/.aws/", "mode": "mask"}]`, "sandbox.credentials.files[0].path"},
		{`"files": [{"path": "~/.netrc", "mode": "mask", "extract": "password (\\S+"}]`, "sandbox.credentials.files[0].extract"},
		{`"files": [{"path": "~/.netrc", "mode": "mask", "extract": "password \\S+"}]`, "sandbox.credentials.files[0].extract"},
		{`"files": [{"path": "~/.netrc", "mode": "mask", "onExtractNoMatch": "ignore"}]`, "sandbox.credentials.files[0].onExtractNoMatch"},
	} {
		writeFile(t, filepath.Join(cfg, "settings.json"), `{"sandbox": {"credentials": {`+tt.entry+`}}}`)
		if _, err := Load(loc); err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: err = %v, want one naming %s", tt.entry, err, tt.field)
		}
	}
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"sandbox": {"network": {"tlsTerminate": {"caCertPath": "/x"}}}}`)
	if _, err := Load(loc); err == nil || !strings.Contains(err.Error(), "sandbox.network.tlsTerminate") {
		t.Errorf("tlsTerminate with a certificate and no key: err = %v", err)
	}
}

// TestLoad_redact: the redact object (agent-mcp's own key) adds values,
// variables and patterns from every source; a bad entry is refused
// naming it; the key is not reported as unknown.
func TestLoad_redact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, cfg := filepath.Join(dir, "home"), filepath.Join(dir, "cfg")
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"redact": {"values": ["internal-db-pass-1"], "envVars": ["MY_DSN"], "patterns": ["sk_live_[0-9a-zA-Z]{24}", "password=(\\S+)"]}}`)
	loc := Locations{Home: home, ConfigDir: cfg}
	s, err := Load(loc)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.RedactValues) != 1 || len(s.RedactEnvVars) != 1 || len(s.RedactPatterns) != 2 || s.RedactPatterns[1].Name != "redact.patterns[1]" {
		t.Errorf("redact = %q %q %+v", s.RedactValues, s.RedactEnvVars, s.RedactPatterns)
	}
	if len(s.Unknown) > 0 {
		t.Errorf("Unknown = %q", s.Unknown)
	}
	for _, tt := range []struct{ body, field string }{
		{`{"values": ["short"]}`, "redact.values[0]"},
		{`{"envVars": ["MY-DSN"]}`, "redact.envVars[0]"},
		{`{"patterns": ["a("]}`, "redact.patterns[0]"},
		{`{"patterns": ["x*"]}`, "redact.patterns[0]"},
	} {
		writeFile(t, filepath.Join(cfg, "settings.json"), `{"redact": `+tt.body+`}`)
		if _, err := Load(loc); err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: err = %v, want one naming %s", tt.body, err, tt.field)
		}
	}
}

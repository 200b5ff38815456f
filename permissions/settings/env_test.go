package settings

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoad_sandboxEnvAllow: sandbox.env.allow joins across sources, a
// name that is not a variable's is refused naming the key and the entry,
// and an untrusted workspace cannot add one (it would hand the server's
// secret to whatever the repository's scripts run).
func TestLoad_sandboxEnvAllow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, cfg, proj := filepath.Join(dir, "home"), filepath.Join(dir, "cfg"), filepath.Join(dir, "proj")
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"sandbox": {"env": {"allow": ["GITHUB_TOKEN", "MYAPP_*"]}}}`)
	writeFile(t, filepath.Join(proj, ".claude/settings.json"), `{"sandbox": {"env": {"allow": ["AWS_SECRET_ACCESS_KEY"]}}}`)
	loc := Locations{Home: home, ConfigDir: cfg, Project: proj}
	s, err := Load(loc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Sandbox.EnvAllow, []string{"GITHUB_TOKEN", "MYAPP_*"}) {
		t.Errorf("untrusted workspace: env.allow = %q, want the user's only", s.Sandbox.EnvAllow)
	}
	if !strings.Contains(strings.Join(s.Ignored, "\n"), "sandbox.env.allow") {
		t.Errorf("Ignored %q does not name sandbox.env.allow", s.Ignored)
	}
	if _, err := Trust(cfg, proj); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(loc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Sandbox.EnvAllow, []string{"GITHUB_TOKEN", "MYAPP_*", "AWS_SECRET_ACCESS_KEY"}) {
		t.Errorf("trusted workspace: env.allow = %q", s.Sandbox.EnvAllow)
	}
	for _, bad := range []string{`""`, `"1ABC"`, `"A-B"`, `"A=B"`, `"*"`, `"A*B"`, `"PATH "`} {
		writeFile(t, filepath.Join(proj, ".claude/settings.local.json"), `{"sandbox": {"env": {"allow": ["OK", `+bad+`]}}}`)
		_, err := Load(loc)
		if err == nil || !strings.Contains(err.Error(), "sandbox.env.allow[1]") {
			t.Errorf("allow %s: err = %v, want one naming sandbox.env.allow[1]", bad, err)
		}
	}
	writeFile(t, filepath.Join(proj, ".claude/settings.local.json"), `{"sandbox": {"env": {"allow": "GITHUB_TOKEN"}}}`)
	if _, err := Load(loc); err == nil || !strings.Contains(err.Error(), "sandbox") {
		t.Errorf("allow as a string: err = %v, want one naming the key", err)
	}
}

package settings

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoad_sandbox: the sandbox object merges (the last source's values
// win, lists join), reports bad values by key, and an untrusted workspace
// may tighten the sandbox but not loosen it.
func TestLoad_sandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, cfg, proj := filepath.Join(dir, "home"), filepath.Join(dir, "cfg"), filepath.Join(dir, "proj")
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"sandbox": {"excludedCommands": ["docker"], "buildCaches": ["~/c", "rel"], "network": {"allowedDomains": ["x"]}}}`)
	writeFile(t, filepath.Join(proj, ".claude/settings.json"), `{"sandbox": {"enabled": false, "excludedCommands": ["curl"],
		"buildCaches": ["/"], "network": false, "autoAllowBashIfSandboxed": true}}`)
	loc := Locations{Home: home, ConfigDir: cfg, Project: proj}
	s, err := Load(loc)
	if err != nil {
		t.Fatal(err)
	}
	sb := s.Sandbox
	if sb.Enabled != nil || sb.AutoAllow != nil || !slices.Equal(sb.Excluded, []string{"docker"}) ||
		!slices.Equal(sb.BuildCaches, []string{filepath.Join(home, "c"), filepath.Join(proj, "rel")}) || !sb.NetworkOff {
		t.Errorf("untrusted workspace: sandbox settings = %+v, want the user's, tightened by network false only", sb)
	}
	joined := strings.Join(s.Ignored, "\n")
	for _, key := range []string{"sandbox.enabled", "sandbox.excludedCommands", "sandbox.buildCaches", "sandbox.autoAllowBashIfSandboxed"} {
		if !strings.Contains(joined, key) {
			t.Errorf("Ignored %q does not name %s", s.Ignored, key)
		}
	}
	if _, err := Trust(cfg, proj); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(loc); err != nil {
		t.Fatal(err)
	}
	if sb := s.Sandbox; sb.Enabled == nil || *sb.Enabled || !slices.Equal(sb.Excluded, []string{"docker", "curl"}) || !slices.Equal(sb.BuildCaches, []string{"/"}) {
		t.Errorf("trusted workspace: sandbox settings = %+v", sb)
	}
	writeFile(t, filepath.Join(proj, ".claude/settings.local.json"), `{"sandbox": {"network": "off"}}`)
	if _, err := Load(loc); err == nil || !strings.Contains(err.Error(), "sandbox.network") {
		t.Errorf("a bad sandbox.network: err = %v, want one naming the key", err)
	}
}

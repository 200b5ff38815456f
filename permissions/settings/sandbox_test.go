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
		!slices.Equal(sb.BuildCaches, []string{filepath.Join(home, "c"), filepath.Join(proj, "rel")}) || sb.Network != "off" || !slices.Equal(sb.AllowedDomains, []string{"x"}) {
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

// TestLoad_sandboxNetwork: sandbox.network is "proxy", true, false or
// Claude Code's object; an untrusted workspace keeps its deniedDomains
// and loses its allowedDomains and a true.
func TestLoad_sandboxNetwork(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		user, project     string
		want              string
		allowed, denied   []string
		ignoredSubstrings []string
	}{
		{`{}`, `{}`, "", nil, nil, nil},
		{`{"sandbox": {"network": "proxy"}}`, `{}`, "proxy", nil, nil, nil},
		{`{"sandbox": {"network": true}}`, `{}`, "on", nil, nil, nil},
		{`{"sandbox": {"network": {"allowedDomains": ["go.dev", "*.github.com"], "deniedDomains": ["evil.example"]}}}`, `{}`,
			"proxy", []string{"go.dev", "*.github.com"}, []string{"evil.example"}, nil},
		{`{"sandbox": {"network": {"enabled": false}}}`, `{}`, "off", nil, nil, nil},
		{`{}`, `{"sandbox": {"network": {"allowedDomains": ["a.example"], "deniedDomains": ["b.example"]}}}`,
			"proxy", nil, []string{"b.example"}, []string{"sandbox.network.allowedDomains"}},
		{`{}`, `{"sandbox": {"network": true}}`, "", nil, nil, []string{"sandbox.network"}},
	} {
		dir := t.TempDir()
		home, cfg, proj := filepath.Join(dir, "home"), filepath.Join(dir, "cfg"), filepath.Join(dir, "proj")
		writeFile(t, filepath.Join(cfg, "settings.json"), tt.user)
		writeFile(t, filepath.Join(proj, ".claude/settings.json"), tt.project)
		s, err := Load(Locations{Home: home, ConfigDir: cfg, Project: proj})
		if err != nil {
			t.Fatal(err)
		}
		sb := s.Sandbox
		if sb.Network != tt.want || !slices.Equal(sb.AllowedDomains, tt.allowed) || !slices.Equal(sb.DeniedDomains, tt.denied) {
			t.Errorf("%s / %s: network %q allowed %q denied %q", tt.user, tt.project, sb.Network, sb.AllowedDomains, sb.DeniedDomains)
		}
		for _, want := range tt.ignoredSubstrings {
			if !strings.Contains(strings.Join(s.Ignored, "\n"), want) {
				t.Errorf("%s: Ignored %q does not name %s", tt.project, s.Ignored, want)
			}
		}
	}
}

package settings

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoad_sandboxFilesystem: sandbox.filesystem.allowRead and denyRead
// join across sources with "~/" expanded, an entry that is not a path is
// refused naming the key and the entry, and an untrusted workspace cannot
// open the home (its denyRead, which tightens, stays).
func TestLoad_sandboxFilesystem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, cfg, proj := filepath.Join(dir, "home"), filepath.Join(dir, "cfg"), filepath.Join(dir, "proj")
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"sandbox": {"filesystem": {"allowRead": ["~/docs", "/opt/x"], "denyRead": ["~/go/secret"]}}}`)
	writeFile(t, filepath.Join(proj, ".claude/settings.json"), `{"sandbox": {"filesystem": {"allowRead": ["~/.ssh"], "denyRead": ["data"]}}}`)
	loc := Locations{Home: home, ConfigDir: cfg, Project: proj}
	s, err := Load(loc)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(home, "docs"), "/opt/x"}; !slices.Equal(s.Sandbox.AllowRead, want) {
		t.Errorf("untrusted workspace: allowRead = %q, want %q", s.Sandbox.AllowRead, want)
	}
	if want := []string{filepath.Join(home, "go/secret"), filepath.Join(proj, "data")}; !slices.Equal(s.Sandbox.DenyRead, want) {
		t.Errorf("untrusted workspace: denyRead = %q, want %q", s.Sandbox.DenyRead, want)
	}
	if !strings.Contains(strings.Join(s.Ignored, "\n"), "sandbox.filesystem.allowRead") {
		t.Errorf("Ignored %q does not name sandbox.filesystem.allowRead", s.Ignored)
	}
	if _, err := Trust(cfg, proj); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(loc); err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(home, "docs"), "/opt/x", filepath.Join(home, ".ssh")}; !slices.Equal(s.Sandbox.AllowRead, want) {
		t.Errorf("trusted workspace: allowRead = %q, want %q", s.Sandbox.AllowRead, want)
	}
	for _, bad := range []string{`""`, `"  "`, `"a\u0000b"`} {
		for _, key := range []string{"allowRead", "denyRead"} {
			writeFile(t, filepath.Join(proj, ".claude/settings.local.json"), `{"sandbox": {"filesystem": {"`+key+`": ["ok", `+bad+`]}}}`)
			_, err := Load(loc)
			if err == nil || !strings.Contains(err.Error(), "sandbox.filesystem."+key+"[1]") {
				t.Errorf("%s %s: err = %v, want one naming sandbox.filesystem.%s[1]", key, bad, err, key)
			}
		}
	}
}

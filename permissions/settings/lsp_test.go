package settings

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A workspace's own lspServers are commands the repository would have
// agent-mcp run: read only once it is trusted. The user's are read
// always, in order, and lspDiagnosticsWaitMs is checked.
func TestLoad_lspServers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, cfg, proj := filepath.Join(dir, "home"), filepath.Join(dir, "cfg"), filepath.Join(dir, "proj")
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"lspServers": {"go": {"command": "gopls"}}, "lspDiagnosticsWaitMs": 1500}`)
	writeFile(t, filepath.Join(proj, ".claude/settings.json"), `{"lspServers": {"py": {"command": "./evil"}}}`)
	loc := Locations{Home: home, ConfigDir: cfg, Project: proj}
	s, err := Load(loc)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.LSPServers) != 1 || s.LSPServers[0].Name != "go" || s.LSPServers[0].Source != filepath.Join(cfg, "settings.json") || s.WorkspaceTrusted {
		t.Errorf("untrusted: %+v trusted %v", s.LSPServers, s.WorkspaceTrusted)
	}
	if s.LSPDiagnosticsWait != 1500*time.Millisecond {
		t.Errorf("wait %v", s.LSPDiagnosticsWait)
	}
	if j := strings.Join(s.Ignored, "\n"); !strings.Contains(j, "ignored lspServers (py)") {
		t.Errorf("Ignored %q does not name the workspace's lspServers", s.Ignored)
	}
	loc.TrustProject = true
	if s, err = Load(loc); err != nil || len(s.LSPServers) != 2 || s.LSPServers[1].Name != "py" || !s.WorkspaceTrusted {
		t.Errorf("trusted: %+v %v", s, err)
	}
	writeFile(t, filepath.Join(cfg, "settings.json"), `{"lspDiagnosticsWaitMs": 0}`)
	if _, err := Load(loc); err == nil || !strings.Contains(err.Error(), "lspDiagnosticsWaitMs: must be at least 1") {
		t.Errorf("a zero wait: %v", err)
	}
}

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAncestorsWithin(t *testing.T) {
	roots := []string{"/w", "/w/sub", "/other"}
	got := ancestorsWithin([]string{"/w/.git/config", "/w/.git/hooks", "/w/a/b/secret", "/w/sub/x/y", "/w/top", "/elsewhere/a/b"}, roots)
	want := []string{"/w/.git", "/w/a", "/w/a/b", "/w/sub/x"}
	if !slices.Equal(got, want) {
		t.Errorf("ancestorsWithin = %v, want %v", got, want)
	}
}

// The guard takes stock of absent names only while no command runs, and
// moves aside what a command created, never following a link (a link
// planted at the aside name is skipped).
func TestAbsentGuard(t *testing.T) {
	dir := t.TempDir()
	envrc, mcp := filepath.Join(dir, ".envrc"), filepath.Join(dir, ".mcp.json")
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, envrc+".sandbox-refused"); err != nil {
		t.Fatal(err)
	}
	var g absentGuard
	g.begin([]string{envrc, mcp})
	if err := os.Symlink(target, envrc); err != nil {
		t.Fatal(err)
	}
	// A second command starting meanwhile sweeps: the name is not taken
	// as the user's.
	g.begin([]string{envrc, mcp})
	if _, err := os.Lstat(envrc); err == nil {
		t.Error(".envrc created by the first command was not moved aside when the second started")
	}
	if err := os.WriteFile(mcp, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.sweep(true)
	g.sweep(true)
	msgs := g.report()
	if len(msgs) != 2 || !strings.Contains(msgs[0], envrc+".sandbox-refused-1") {
		t.Errorf("report = %q", msgs)
	}
	if _, err := os.Lstat(mcp); err == nil {
		t.Error(".mcp.json was not moved aside")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target changed: %q", b)
	}
	// Now no command runs: a name the user creates is theirs.
	if err := os.WriteFile(mcp, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.begin([]string{envrc, mcp})
	g.sweep(true)
	if _, err := os.Lstat(mcp); err != nil {
		t.Errorf("the user's .mcp.json was moved: %v", err)
	}
}

func TestExcluded_every_simple_command(t *testing.T) {
	s := &Sandbox{cfg: Config{Excluded: []string{"git", "docker compose"}}}
	for cmd, want := range map[string]bool{
		"git status":                          true,
		"git status && git push":              true,
		"timeout 5 git fetch":                 true,
		"docker compose up; git log | git sh": true,
		"git --version; python3 w.py":         false,
		"git log | sh -c 'touch x'":           false,
		"git x \"$(touch y)\"":                false,
		"docker run x":                        false,
		"g=git; $g status":                    false,
		"gitx status":                         false,
		"git status; eval \"$x\"":             false,
		"git (":                               false,
	} {
		if got := s.Excluded(cmd); got != want {
			t.Errorf("Excluded(%q) = %v, want %v", cmd, got, want)
		}
	}
}

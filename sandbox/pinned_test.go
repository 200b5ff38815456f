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
	g.begin([]string{envrc, mcp}, []string{dir}, nil, repos{}, nil)
	if err := os.Symlink(target, envrc); err != nil {
		t.Fatal(err)
	}
	// A second command starting meanwhile sweeps: the name is not taken
	// as the user's.
	g.begin([]string{envrc, mcp}, []string{dir}, nil, repos{}, nil)
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
	g.begin([]string{envrc, mcp}, []string{dir}, nil, repos{}, nil)
	g.sweep(true)
	if _, err := os.Lstat(mcp); err != nil {
		t.Errorf("the user's .mcp.json was moved: %v", err)
	}
}

// The revert never follows a link a command put on the way to a protected
// name: the link itself is moved aside and what it points to is left;
// and a command that takes every numbered aside name does not keep its
// name.
func TestAbsentGuard_planted_links_and_names(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "attributes"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(dir, ".git")
	if err := os.Mkdir(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	attrs, envrc := filepath.Join(gitDir, "info", "attributes"), filepath.Join(dir, ".envrc")
	var g absentGuard
	g.begin([]string{attrs, envrc}, []string{dir}, nil, repos{}, nil)
	if err := os.Symlink(outside, filepath.Join(gitDir, "info")); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < asideNumbered; n++ {
		if err := os.WriteFile(filepath.Join(dir, asideName(".envrc", n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(envrc, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.sweep(true)
	if b, err := os.ReadFile(filepath.Join(outside, "attributes")); err != nil || string(b) != "keep" {
		t.Errorf("the file the planted link reached was moved: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "info")); err == nil {
		t.Error("the link planted as .git/info was not moved aside")
	}
	if _, err := os.Lstat(envrc); err == nil {
		t.Error(".envrc stayed: every numbered aside name was taken")
	}
	if msgs := g.report(); len(msgs) != 2 || !slices.ContainsFunc(msgs, func(m string) bool {
		return strings.Contains(m, "a link put on the way to "+attrs)
	}) {
		t.Errorf("report = %q", msgs)
	}
}

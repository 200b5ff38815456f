package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// While a command runs, a protected name it creates is moved aside at
// once, with no command starting or ending: here the name appears, and
// nothing but the watcher moves it; also when it appears beneath a
// directory that did not exist when the command started.
func TestAbsentGuard_watches_while_a_command_runs(t *testing.T) {
	dir := t.TempDir()
	envrc, attrs := filepath.Join(dir, ".envrc"), filepath.Join(dir, ".git", "info", "attributes")
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var g absentGuard
	g.begin([]string{envrc, attrs}, []string{dir}, nil, repos{}, nil)
	defer g.sweep(true)
	gone := func(p string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Lstat(p); os.IsNotExist(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not moved aside while the command ran", p)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := os.WriteFile(envrc, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone(envrc)
	if err := os.MkdirAll(filepath.Dir(attrs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(attrs, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone(attrs)
	if msgs := g.report(); len(msgs) != 2 {
		t.Errorf("report = %q", msgs)
	}
}

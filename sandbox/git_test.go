package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The rescan after a command finds the repositories it made (a .git
// directory deep in a new directory, a .git file beside an old one) and
// lists, as new, what in them makes git run code; what the clean point's
// scan found stays known.
func TestRescanRepos_finds_what_a_command_made(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(".git")
	write(".git/config", "[core]\n")
	mk("old/a/b")
	mk("vendor/x/.git")
	seen := map[string]dirState{}
	found := scanRepos([]string{root}, seen)
	known := map[string]bool{}
	for _, p := range append(found.entries, found.dirs...) {
		known[p] = true
	}
	since := time.Now().Add(-linkSlack)
	// With every directory older than the clean point and unchanged, the
	// rescan reads none of them again.
	if got := rescanRepos([]string{root}, seen, time.Now().Add(time.Hour)); len(got) != 0 {
		t.Errorf("a rescan of an unchanged tree found %q", got)
	}

	// What a command makes.
	mk("old/a/b/new/.git")
	write("old/a/b/new/.git/config", "[core]\n\tfsmonitor = x\n")
	mk("gd")
	write("old/.git", "gitdir: ../gd\n")
	mk(".git/modules/s")
	now := reposOf(append(rescanRepos([]string{root}, seen, since), found.entries...))
	paths := newRepoPaths(now, known)
	for _, want := range []string{
		filepath.Join(root, "old/a/b/new/.git/config"),
		filepath.Join(root, "old/.git"),
		filepath.Join(root, "gd/config"),
		filepath.Join(root, ".git/modules/s/config"),
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("newRepoPaths lacks %s: %q", want, paths)
		}
	}
	for _, p := range paths {
		if p == filepath.Join(root, ".git/config") || p == filepath.Join(root, "vendor/x/.git/config") {
			t.Errorf("a repository the clean point found is listed as new: %s", p)
		}
	}
}

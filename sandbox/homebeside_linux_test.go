package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// TestHomeBeside: the walk beside the home is the session's, made again
// once a directory it read has changed: an entry made beside the home
// after the first command is granted to the next, one removed is not,
// and a link beside it that leads into the home never is.
func TestHomeBeside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	for _, d := range []string{home, filepath.Join(root, "old")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(home, filepath.Join(root, "into-home")); err != nil {
		t.Fatal(err)
	}
	var b homeBeside
	has := func(entries []string, e string) bool { return slices.Contains(entries, e) }
	first := b.get(home)
	if !has(first, "D"+filepath.Join(root, "old")) || has(first, "d"+filepath.Join(root, "into-home")) || has(first, "D"+home) {
		t.Fatalf("first walk: %q", first)
	}
	if err := os.Mkdir(filepath.Join(root, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "old")); err != nil {
		t.Fatal(err)
	}
	second := b.get(home)
	if !has(second, "D"+filepath.Join(root, "new")) || has(second, "D"+filepath.Join(root, "old")) {
		t.Errorf("after a change beside the home: %q", second)
	}
}

// BenchmarkHomeBeside: the walk beside the private home as each command
// made it before (walk) and the server's kept one (kept: a stat of each
// directory walked), for the user's own home.
func BenchmarkHomeBeside(b *testing.B) {
	home, err := os.UserHomeDir()
	if err != nil || home == "/" {
		b.Skip("no home")
	}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			launcher.BesideHome(home)
		}
	})
	b.Run("kept", func(b *testing.B) {
		var hb homeBeside
		hb.get(home)
		for b.Loop() {
			hb.get(home)
		}
	})
}

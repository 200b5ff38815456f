package confine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// confineFixture makes /root/app (the working directory), /root/app-evil
// (a sibling sharing its prefix) and /root/outside, with symlinks between
// them.
func confineFixture(t *testing.T) (root, app string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	app = filepath.Join(root, "app")
	for _, d := range []string{"app/sub", "app-evil", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"app/sub/in.txt", "outside/secret.txt", "app-evil/x"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"app/to-outside":      filepath.Join(root, "outside"),
		"app/to-secret":       filepath.Join(root, "outside/secret.txt"),
		"app/to-inside":       "sub/in.txt",
		"app/dangling-out":    filepath.Join(root, "outside/new.txt"),
		"app/dangling-in":     "sub/new.txt",
		"app/rel-escape":      "../outside/secret.txt",
		"outside/to-app-file": filepath.Join(app, "sub/in.txt"),
		"app/loop":            "loop",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	return root, app
}

func TestConfinement(t *testing.T) {
	t.Parallel()
	root, app := confineFixture(t)
	c := New([]string{app})
	tests := []struct {
		name, path string
		want       bool
	}{
		{"the directory itself", app, true},
		{"a file inside", app + "/sub/in.txt", true},
		{"a new file inside", app + "/sub/new.txt", true},
		{"a new directory tree inside", app + "/a/b/c.txt", true},
		{"dotdot out", app + "/sub/../../outside/secret.txt", false},
		{"dotdot staying in", app + "/sub/../sub/in.txt", true},
		{"sibling with the same prefix", root + "/app-evil/x", false},
		{"parent", root, false},
		{"symlink in to out (dir)", app + "/to-outside/secret.txt", false},
		{"symlink in to out (file)", app + "/to-secret", false},
		{"symlink in to in", app + "/to-inside", true},
		{"symlink out to in", root + "/outside/to-app-file", false},
		{"dangling symlink pointing out", app + "/dangling-out", false},
		{"dangling symlink pointing in", app + "/dangling-in", true},
		{"relative symlink escaping", app + "/rel-escape", false},
		{"symlink loop", app + "/loop", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Contains(filepath.Clean(tt.path)); got != tt.want {
				real, err := ResolvePath(filepath.Clean(tt.path))
				t.Fatalf("Contains(%s) = %v, want %v (resolves to %s, %v)", tt.path, got, tt.want, real, err)
			}
		})
	}
}

func TestInside_componentWise(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dir, path string
		want      bool
	}{
		{"/work/app", "/work/app", true},
		{"/work/app", "/work/app/x", true},
		{"/work/app", "/work/app-evil", false},
		{"/work/app", "/work/ap", false},
		{"/work/app", "/work/app..x", false},
		{"/work/app", "/work/app/..x", true},
		{"/", "/anything", true},
	}
	for _, tt := range tests {
		if got := Inside(tt.dir, tt.path); got != tt.want {
			t.Errorf("Inside(%s, %s) = %v, want %v", tt.dir, tt.path, got, tt.want)
		}
	}
}

func TestOpenFile_raceWithSwappedSymlink(t *testing.T) {
	t.Parallel()
	root, app := confineFixture(t)
	dirs := []string{app}
	target := filepath.Join(app, "swap")
	if err := os.Symlink("sub/in.txt", target); err != nil {
		t.Fatal(err)
	}
	if !New(dirs).Contains(target) {
		t.Fatal("the link points inside at check time")
	}
	// Between the check and the open, the link is swapped to point out.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside/secret.txt"), target); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(dirs, target, os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		f.Close()
		t.Fatal("a write through a swapped symlink to the outside must fail")
	}
	if !errors.Is(err, ErrOutside) {
		t.Fatalf("error %v does not wrap ErrOutside", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "outside/secret.txt")); string(b) != "x" {
		t.Fatal("the outside file was changed")
	}
	// Creating through a dangling link to the outside fails the same way.
	if f, err := OpenFile(dirs, filepath.Join(app, "dangling-out"), os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
		f.Close()
		t.Fatal("creating through a dangling symlink to the outside must fail")
	}
	if _, err := os.Stat(filepath.Join(root, "outside/new.txt")); err == nil {
		t.Fatal("a file was created outside")
	}
	// An ordinary file inside opens.
	f, err = OpenFile(dirs, filepath.Join(app, "sub/in.txt"), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

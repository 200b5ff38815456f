package protect

import "testing"

var names = Names{
	Dirs:       []string{".git", ".claude", ".vscode", ".cargo"},
	Files:      []string{".envrc", ".mcp.json", ".gitmodules"},
	ConfigDirs: []string{"git", "go"},
	Places:     []string{"/xdg/git"},
	GitCode:    []string{"config", "config.worktree", "hooks", "commondir", "info/attributes"},
}

// TestProtected: what the Write and Edit tools refuse, at any depth.
func TestProtected(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path string
		want bool
		what string
	}{
		{"/w/sub/.envrc", true, ".envrc"},
		{"/w/crate/.cargo/config.toml", true, ".cargo/"},
		{"/w/.git/objects/ab/cd", true, ".git/"},
		{"/w/a/.config/go/env", true, ".config/go/"},
		{"/xdg/git/config", true, "/xdg/git"},
		{"/w/sub/envrc", false, ""},
		{"/w/.envrc.bak", false, ""},
		{"/w/.config/other", false, ""},
	} {
		ok, what := names.Protected(c.path)
		if ok != c.want || what != c.what {
			t.Errorf("Protected(%q) = %v %q, want %v %q", c.path, ok, what, c.want, c.what)
		}
	}
}

// TestSandboxed: the kernel's view narrows a git directory to what runs
// code (at any depth of it), says which .git a verdict rests on, and
// protects a .git entry itself.
func TestSandboxed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rel   string
		want  bool
		what  string
		gitAt int
	}{
		{".git/objects/ab/cd", false, "", -1},
		{".git/index.lock", false, "", -1},
		{".git/refs/heads/config", false, "", -1},
		{".git/config", true, ".git/config", 0},
		{".git/config.lock", false, "", -1},
		{".git/hooks/pre-commit", true, ".git/hooks", 0},
		{".git/info/attributes", true, ".git/info/attributes", 0},
		{".git/info/exclude", false, "", -1},
		{".git/modules/x/config", true, ".git/modules/x/config", 0},
		{".git/modules/x/objects/config", false, "", -1},
		{".git/worktrees/w/commondir", true, ".git/worktrees/w/commondir", 0},
		{"sub/.git/hooks/post-checkout", true, ".git/hooks", 1},
		{"sub/.git", true, ".git", -1},
		{".git/x/.claude/settings.json", true, ".claude/", -1},
		{"sub/.claude/settings.json", true, ".claude/", -1},
		{"a/b/.envrc", true, ".envrc", -1},
		{"a/.config/git/config", true, ".config/git/", -1},
		{"a/b/c.go", false, "", -1},
		{".", false, "", -1},
	} {
		ok, what, gitAt := names.Sandboxed(c.rel, "/w/"+c.rel)
		if ok != c.want || what != c.what || gitAt != c.gitAt {
			t.Errorf("Sandboxed(%q) = %v %q %d, want %v %q %d", c.rel, ok, what, gitAt, c.want, c.what, c.gitAt)
		}
	}
	if ok, what, _ := names.Sandboxed(".", "/xdg/git/config"); !ok || what != "/xdg/git" {
		t.Errorf("a protected place outside every root: %v %q", ok, what)
	}
}

// TestOnTheWay: the directories on the way to a protected path that a
// command may make only as directories.
func TestOnTheWay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rel, abs string
		want     bool
	}{
		{".git/info", "/w/.git/info", true},
		{"sub/.git/info", "/w/sub/.git/info", true},
		{".git/objects", "/w/.git/objects", false},
		{"info", "/w/info", false},
		{".config", "/w/.config", true},
		{"a/.config", "/w/a/.config", true},
		{"x", "/xdg", true},
		{"x", "/xdgx", false},
		{"src", "/w/src", false},
	} {
		if ok, _ := names.OnTheWay(c.rel, c.abs); ok != c.want {
			t.Errorf("OnTheWay(%q, %q) = %v, want %v", c.rel, c.abs, ok, c.want)
		}
	}
}

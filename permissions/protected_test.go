package permissions

import (
	"slices"
	"testing"
)

func TestProtected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want bool
	}{
		{"/w/.git/config", true},
		{"/w/.git", true},
		{"/w/.claude/settings.json", true},
		{"/w/.mcp.json", true},
		{"/home/u/.bashrc", true},
		{"/home/u/.zshrc", true},
		{"/w/src/main.go", false},
		{"/w/.gitignore", false},
		{"/w/git/config", false},
		{"/w/.cursor/mcp.json", true},
		{"/home/u/.config/agent-mcp/settings.json", true},
		{"/home/u/.config/agent-mcp/mcp.json", true},
		{"/home/u/.config/git/config", true},
		{"/home/u/.config/fish/config.fish", true},
		{"/home/u/.config/fish/conf.d/x.fish", true},
		{"/home/u/.bash_aliases", true},
		{"/home/u/.config/other/config", false},
		// Every supported host's and editor's configuration, at any depth.
		{"/w/.gemini/settings.json", true},
		{"/w/sub/.codex/config.toml", true},
		{"/w/a/b/.zed/settings.json", true},
		{"/w/.continue/config.json", true},
		{"/w/.windsurf/rules", true},
		{"/w/pkg/.lsp.json", true},
		{"/w/crate/.cargo/config.toml", true},
		{"/w/sub/.claude/settings.json", true},
		// Package-manager and tool config that runs code.
		{"/w/web/.yarnrc.yml", true},
		{"/w/.pnpmfile.cjs", true},
		{"/w/.venv/pip.conf", true},
		{"/w/.pre-commit-config.yaml", true},
		{"/w/.husky/pre-commit", true},
		{"/w/sub/.mise.toml", true},
		{"/w/package.json", false},
		{"/w/.github/workflows/ci.yml", false},
	}
	for _, tt := range tests {
		if got, _ := Protected(tt.path); got != tt.want {
			t.Errorf("Protected(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestNamesProtected(t *testing.T) {
	t.Parallel()
	a := Anchors{Home: "/home/u", Root: "/proj", Cwd: "/proj"}
	tests := []struct {
		rule string
		want bool
	}{
		{"Edit(//proj/**)", false},
		{"Edit(/**)", false},
		{"Edit", false},
		{"Edit(.git/hooks/**)", true},
		{"Edit(.git)", true},
		{"Edit(//proj/.git/hooks/pre-commit)", true},
		{"Edit(~/.bashrc)", true},
		{"Edit(~/.config/git/config)", true},
		{"Edit(//proj/*/hooks/x)", false},
		{"Edit(src/**)", false},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.rule)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := NewSourcedRule(r, Allow, "test", a)
		if err != nil {
			t.Fatal(err)
		}
		if got := sr.NamesProtected(); got != tt.want {
			t.Errorf("%s: NamesProtected = %v, want %v", tt.rule, got, tt.want)
		}
	}
}

func TestProtectedPaths(t *testing.T) {
	t.Parallel()
	got := ProtectedPaths([]string{"/w"}, "/home/u")
	for _, want := range []string{"/w/.git", "/w/.mcp.json", "/w/.cursor", "/home/u/.bashrc", "/home/u/.config/git", "/home/u/.config/agent-mcp"} {
		if !slices.Contains(got, want) {
			t.Errorf("ProtectedPaths lacks %s", want)
		}
	}
	for _, p := range got {
		if ok, _ := Protected(p); !ok {
			t.Errorf("ProtectedPaths lists %s, which Protected does not protect", p)
		}
	}
}

// TestProtected_movedByEnvironment: where XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL
// or GOENV move the user's git, go, fish or agent-mcp configuration, the
// moved place is protected, and listed for the sandbox. (Not parallel: it
// sets the process's environment.)
func TestProtected_movedByEnvironment(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/home/u/xdg")
	t.Setenv("GIT_CONFIG_GLOBAL", "/w/gitconfig-global")
	t.Setenv("GOENV", "/w/tools/go.env")
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/home/u/xdg/git/config", true},
		{"/home/u/xdg/go/env", true},
		{"/home/u/xdg/agent-mcp/settings.json", true},
		{"/home/u/xdg/fish/config.fish", true},
		{"/w/gitconfig-global", true},
		{"/w/tools/go.env", true},
		{"/home/u/xdg/other/config", false},
		{"/w/tools/go.mod", false},
	} {
		if got, _ := Protected(tt.path); got != tt.want {
			t.Errorf("Protected(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
	paths := ProtectedPaths([]string{"/w"}, "/home/u")
	for _, want := range []string{"/home/u/xdg/git", "/home/u/xdg/go", "/w/gitconfig-global", "/w/tools/go.env", "/w/.gemini", "/w/.lsp.json"} {
		if !slices.Contains(paths, want) {
			t.Errorf("ProtectedPaths lacks %s: %q", want, paths)
		}
	}
	t.Setenv("GOENV", "off")
	if ok, _ := Protected("/w/off"); ok {
		t.Error("GOENV=off protected a relative name")
	}
}

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

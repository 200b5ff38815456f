package permissions

import (
	"slices"
	"testing"
)

func TestSandboxReadOnlyPaths(t *testing.T) {
	t.Parallel()
	got := SandboxReadOnlyPaths([]string{"/w"}, "/home/u")
	for _, want := range []string{"/w/.git/hooks", "/w/.git/config", "/w/.mcp.json", "/w/.claude", "/home/u/.bashrc", "/home/u/.config/agent-mcp"} {
		if !slices.Contains(got, want) {
			t.Errorf("SandboxReadOnlyPaths lacks %s", want)
		}
	}
	for _, not := range []string{"/w/.git", "/home/u/.git"} {
		if slices.Contains(got, not) {
			t.Errorf("SandboxReadOnlyPaths lists %s whole: git could not commit", not)
		}
	}
	for _, p := range got {
		if ok, _ := Protected(p); !ok {
			t.Errorf("SandboxReadOnlyPaths lists %s, which Protected does not protect", p)
		}
	}
}

func TestPathPattern(t *testing.T) {
	t.Parallel()
	a := Anchors{Home: "/home/u", Root: "/proj", Cwd: "/proj/sub"}
	for _, tc := range []struct{ spec, base, glob string }{
		{"./secret/**", "/proj/sub", "secret/**"},
		{"//etc/passwd", "/", "etc/passwd"},
		{"~/.ssh/**", "/home/u", ".ssh/**"},
		{".env", "/proj/sub", "**/.env"},
	} {
		r, err := NewSourcedRule(Rule{Tool: "Read", Specifier: tc.spec}, Deny, "test", a)
		if err != nil {
			t.Fatal(err)
		}
		base, glob, ok := r.PathPattern()
		if !ok || base != tc.base || glob != tc.glob {
			t.Errorf("%s: got %q %q %v, want %q %q", tc.spec, base, glob, ok, tc.base, tc.glob)
		}
	}
	r, _ := NewSourcedRule(Rule{Tool: "Bash"}, Deny, "test", a)
	if _, _, ok := r.PathPattern(); ok {
		t.Error("a whole-tool rule has no path pattern")
	}
}

package sandbox

import (
	"slices"
	"testing"
)

// TestPathAfter: the path a refusal message names under the home, cut
// where the message's own words begin.
func TestPathAfter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ line, want string }{
		{"cat: /h/notes/s.txt: Permission denied", "/h/notes/s.txt"},
		{"[Errno 2] No such file or directory: '/h/.app/token'", "/h/.app/token"},
		{"open /h/a b: no such file", "/h/a"},
		{"cat: /hx/y: No such file or directory", ""},
		{"cat: /h: Permission denied", ""},
	} {
		if got := pathAfter(c.line, "/h"); got != c.want {
			t.Errorf("pathAfter(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

// TestPrivateHomeNotes: a refused read under the private home names the
// setting that opens it, once a path; the working directories, writable
// paths and kept paths there draw no line, nor does a path outside.
func TestPrivateHomeNotes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := &Sandbox{opts: Options{Home: home, HomeReadable: []string{home + "/go"}, Writable: []string{home + "/extra"}},
		layers: Layers{Landlock: 1}}
	out := "cat: " + home + "/notes/s.txt: Permission denied\n" +
		"cat: " + home + "/notes/s.txt: Permission denied\n" +
		"cat: " + home + "/go/missing: No such file or directory\n" +
		"cat: " + home + "/proj/missing: No such file or directory\n" +
		"cat: " + home + "/extra/x: No such file or directory\n" +
		"cat: /elsewhere/x: No such file or directory\n" +
		"python: [Errno 2] No such file or directory: '" + home + "/.app/token'\n"
	got := s.PrivateHomeNotes(out, []string{home + "/proj"}, 20)
	want := []string{
		"agent-mcp: " + home + "/notes/s.txt is private to the sandbox; allow it with sandbox.filesystem.allowRead",
		"agent-mcp: " + home + "/.app/token is private to the sandbox; allow it with sandbox.filesystem.allowRead",
	}
	if !slices.Equal(got, want) {
		t.Errorf("notes = %q, want %q", got, want)
	}
	if got := s.PrivateHomeNotes(out, nil, 1); len(got) != 1 {
		t.Errorf("with max 1: %d notes", len(got))
	}
}

package sandbox

import (
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

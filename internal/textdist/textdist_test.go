package textdist

import "testing"

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"permissions", "permisions", 1},
		{"same", "same", 0},
		{"héllo", "hello", 1}, // runes, not bytes
		{"日本語", "日本", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestAtMost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3},  // over: limit+1
		{"kitten", "sitting", 10, 3}, // under: the distance
		{"a", "abcdefgh", 2, 3},      // lengths alone rule it out
		{"abcdef", "uvwxyz", 1, 2},   // every row over the limit
		{"main.go", "mian.go", 2, 2}, // a swap is two edits
		{"README.md", "readme.md", 0, 1},
	} {
		if got := AtMost(c.a, c.b, c.limit); got != c.want {
			t.Errorf("AtMost(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}

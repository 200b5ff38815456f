package launcher

import (
	"slices"
	"testing"
)

// TestOutermost: only paths strictly beneath the home come back, each
// once, without those beneath another (its recursive clone brings them).
func TestOutermost(t *testing.T) {
	t.Parallel()
	got := outermost([]string{"/h/go", "/h/proj/sub", "/h/go/pkg", "/h", "/other", "/h/proj", "/h/goo", "/h/proj/", "/hx/a"}, "/h")
	if want := []string{"/h/go", "/h/goo", "/h/proj"}; !slices.Equal(got, want) {
		t.Errorf("outermost = %q, want %q", got, want)
	}
}

package shell

import (
	"fmt"
	"slices"
	"testing"
)

// TestRefusalLines: each refused connection is said once; past
// maxRefusalLines distinct ones a single line says more were refused.
func TestRefusalLines(t *testing.T) {
	t.Parallel()
	line := func(i int) string {
		return fmt.Sprintf("agent-mcp network: refused 127.0.0.2:%d: a direct connection", 20000+i)
	}
	for _, tt := range []struct {
		name string
		said []string
		want []string
	}{
		{"one", []string{line(0)}, []string{line(0)}},
		{"a retry is said once", []string{line(0), line(0), line(1), line(0)}, []string{line(0), line(1)}},
		{"every port", func() (ls []string) {
			for i := range 500 {
				ls = append(ls, line(i))
			}
			return ls
		}(), func() (ls []string) {
			for i := range maxRefusalLines {
				ls = append(ls, line(i))
			}
			return append(ls, refusalMore)
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			r := &refusalLines{write: func(l string) { got = append(got, l) }}
			for _, l := range tt.said {
				r.say(l)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("said %d lines %q..., want %d", len(got), got[:min(3, len(got))], len(tt.want))
			}
		})
	}
}

package orchestrator

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
)

func TestResultBudget(t *testing.T) {
	t.Parallel()
	limited := func(s *testSpec) { s.MaxResultSizeChars = 5000 }
	p := newTestPipeline(t, testTool("Big", true, nil, limited), testTool("Unbounded", true, nil, func(s *testSpec) {
		s.MaxResultSizeChars = tools.Unlimited
	}))
	for _, c := range []struct {
		name      string
		tool      string
		size      int
		persisted bool
	}{
		{"below the limit", "Big", 4999, false},
		{"at the limit", "Big", 5000, false},
		{"above the limit", "Big", 5001, true},
		{"unlimited tool", "Unbounded", 200000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestSession(t)
			out := p.Run(context.Background(), &tools.UseContext{Session: s}, call("c1", c.tool, testInput{Size: c.size}), nil)
			if out.Err != nil || out.Result.IsError {
				t.Fatalf("call failed: %+v %v", out.Result, out.Err)
			}
			if (out.Persisted != nil) != c.persisted {
				t.Fatalf("persisted = %v, want %v", out.Persisted != nil, c.persisted)
			}
			if !c.persisted {
				if len(out.Result.Text) != c.size {
					t.Errorf("inline text has %d chars, want %d", len(out.Result.Text), c.size)
				}
				return
			}
			saved, err := os.ReadFile(out.Persisted.Path)
			if err != nil {
				t.Fatal(err)
			}
			if len(saved) != c.size {
				t.Errorf("saved %d bytes, want %d", len(saved), c.size)
			}
			path, ok := ResultPath(s, out.Persisted.URI)
			if !ok || path != out.Persisted.Path {
				t.Errorf("ResultPath(%s) = %q, %v", out.Persisted.URI, path, ok)
			}
			want := "<persisted-output>\nOutput too large (4.9KB). Full output saved to: " + out.Persisted.Path +
				"\n\nPreview (first 2KB):\n" + strings.Repeat("x", 2000) + "\n...\n</persisted-output>"
			if out.Result.Text != want {
				t.Errorf("preview =\n%s\nwant\n%s", out.Result.Text, want)
			}
		})
	}
}

func TestPersistedPreviewCutRules(t *testing.T) {
	t.Parallel()
	line := func(n int) string { return strings.Repeat("a", n-1) + "\n" }
	cases := []struct {
		name        string
		text        string
		wantPreview string
		wantMore    bool
	}{
		{"short text is whole", "hello\nworld\n", "hello\nworld\n", false},
		{"exactly 2000 characters is whole", strings.Repeat("b", 2000), strings.Repeat("b", 2000), false},
		{"newline past 1000 cuts there", line(1500) + strings.Repeat("c", 3000), strings.Repeat("a", 1499), true},
		{"newline before 1000 does not cut", line(500) + strings.Repeat("c", 3000), line(500) + strings.Repeat("c", 1500), true},
		{"no newline cuts at 2000", strings.Repeat("d", 2500), strings.Repeat("d", 2000), true},
		{"multibyte characters count as one", strings.Repeat("é", 2500), strings.Repeat("é", 2000), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, more := previewOf(c.text)
			if got != c.wantPreview || more != c.wantMore {
				t.Errorf("previewOf = (%d chars, %v), want (%d chars, %v)", len([]rune(got)), more, len([]rune(c.wantPreview)), c.wantMore)
			}
			block := persistedPreview(c.text, "/tmp/x.txt")
			if strings.Contains(block, "\n...\n") != c.wantMore {
				t.Errorf("the ... line presence = %v, want %v", !c.wantMore, c.wantMore)
			}
		})
	}
}

func TestResultPathRefusesEscapes(t *testing.T) {
	t.Parallel()
	s := newTestSession(t)
	for _, uri := range []string{
		"agent-mcp://results/../../etc/passwd", "agent-mcp://results/", "agent-mcp://results/a/b",
		"file:///etc/passwd", "agent-mcp://results/.hidden",
	} {
		if p, ok := ResultPath(s, uri); ok {
			t.Errorf("ResultPath(%q) = %q, want refusal", uri, p)
		}
	}
}

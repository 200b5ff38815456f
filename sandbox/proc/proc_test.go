package proc

import (
	"slices"
	"testing"
)

func TestScrub(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "ANTHROPIC_API_KEY=k", "AGENT_MCP_TOKEN=t", "BASH_ENV=/x", "HOME=/h", "NOEQUALS"}
	got := Scrub(env, func(k string) bool { return k == "BASH_ENV" })
	want := []string{"PATH=/bin", "HOME=/h", "NOEQUALS"}
	if !slices.Equal(got, want) {
		t.Fatalf("Scrub = %q, want %q", got, want)
	}
	if got := Scrub([]string{"OPENAI_API_KEY=x"}, nil); len(got) != 0 {
		t.Fatalf("Scrub kept a secret: %q", got)
	}
}

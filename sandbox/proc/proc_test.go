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

// TestAllowed: a command gets the variables a build needs and those the
// settings name (whole names, or a prefix ending in "*"); every other
// variable, a near name or a lower-case twin of an allowed one included,
// stays out, and agent-mcp's own secrets stay out even when named.
func TestAllowed(t *testing.T) {
	t.Parallel()
	env := []string{
		"PATH=/bin", "HOME=/h", "LANG=C.UTF-8", "LC_ALL=C", "GOPATH=/g", "CARGO_HOME=/c", "VIRTUAL_ENV=/v",
		"GITHUB_TOKEN=gh", "AWS_SECRET_ACCESS_KEY=aws", "NPM_TOKEN=npm", "HF_TOKEN=hf", "LC_TOKEN=lc",
		"CARGO_REGISTRY_TOKEN=cr", "GOPATHX=near", "path=lower", "MYAPP_KEY=k", "MYAPPKEY=near",
		"ANTHROPIC_API_KEY=a", "NOEQUALS", "=nameless",
	}
	got := Allowed(env, []string{"MYAPP_*", "HF_TOKEN", "ANTHROPIC_API_KEY"})
	want := []string{"PATH=/bin", "HOME=/h", "LANG=C.UTF-8", "LC_ALL=C", "GOPATH=/g", "CARGO_HOME=/c", "VIRTUAL_ENV=/v",
		"HF_TOKEN=hf", "MYAPP_KEY=k"}
	if !slices.Equal(got, want) {
		t.Fatalf("Allowed = %q, want %q", got, want)
	}
	if got := Allowed(env, nil); slices.ContainsFunc(got, func(kv string) bool { return kv == "HF_TOKEN=hf" || kv == "MYAPP_KEY=k" }) {
		t.Fatalf("Allowed without settings kept a named variable: %q", got)
	}
}

package cli

import (
	"strings"
	"testing"
)

// TestEnvLine: `sandbox check` says how much of the environment reaches a
// command and names what it withholds, sorted.
func TestEnvLine(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "HOME=/h", "HF_TOKEN=x", "GITHUB_TOKEN=y", "MYAPP_KEY=z"}
	got := envLine(env, []string{"MYAPP_*"})
	for _, want := range []string{"3 of this environment's 5 variables reach a command", "the 1 names of sandbox.env.allow", "withheld: GITHUB_TOKEN, HF_TOKEN"} {
		if !strings.Contains(got, want) {
			t.Errorf("envLine = %q, want it to say %q", got, want)
		}
	}
}

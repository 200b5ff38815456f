package attacks

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// The attack corpus: every case here (the format is in README.md) that
// neither e2e/attacks/git nor e2e/attacks/protected runs (Package) runs
// through the real binary over MCP, as root and as an unprivileged user,
// with each sandbox layer alone and both together (Run).

// binary is the agent-mcp built once for the corpus.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

func TestAttackCorpus(t *testing.T) {
	t.Parallel()
	Run(t, binary, ".", In(""))
}

// TestSandbox_allowUserNamespaces_lets_commands_make_them: the setting
// lifts the refusal the attack corpus checks (nested-user-namespace).
func TestSandbox_allowUserNamespaces_lets_commands_make_them(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not installed")
	}
	sandboxenv.ForEachLayers(t, binary, []string{"namespaces,landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		cs, _ := e.Serve(t, layers, nil, "--settings", `{"sandbox":{"allowUserNamespaces":true}}`)
		if out, _ := testbin.Bash(t, cs, "unshare -U true && echo MADE", false); !strings.Contains(out, "MADE") {
			t.Errorf("with allowUserNamespaces a command could not make a user namespace: %s", out)
		}
	})
}

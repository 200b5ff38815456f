// Package protected runs the attack corpus's cases on the paths the sandbox
// protects in reach of a command: the protected names of the working
// directory (protected-*) and the server's own output and state files
// (output-*, state-*), chosen by attacks.Package, in a test binary of their
// own.
package protected

import (
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/attacks"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// binary is the agent-mcp built once for these cases.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

func TestAttackCorpus(t *testing.T) {
	t.Parallel()
	attacks.Run(t, binary, "..", attacks.In("protected"))
}

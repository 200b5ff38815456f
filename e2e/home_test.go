package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// TestSandbox_private_home_keeps_agent_mcps_own_binary: agent-mcp
// installed under the home (~/bin, which no toolchain list names) still
// runs inside the sandbox, where the go command starts it as its
// GOCACHEPROG, while the rest of the home stays private.
func TestSandbox_private_home_keeps_agent_mcps_own_binary(t *testing.T) {
	t.Parallel()
	sandboxenv.ForEachLayers(t, binary, sandboxenv.LayerSets, func(t *testing.T, e *sandboxenv.Env, layers string) {
		bin := filepath.Join(e.Home, "bin", "agent-mcp")
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := testbin.CopyExecutable(bin, binary); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.Home, "bin", "neighbour.txt"), []byte("PRIVATE-NEIGHBOUR\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.Bin = bin
		cs, _ := e.Serve(t, layers, nil)
		out, _ := testbin.Bash(t, cs, `"`+bin+`" version && echo BINARY-RAN; cat "`+filepath.Join(e.Home, "bin", "neighbour.txt")+`"; echo RAN`, false)
		if !strings.Contains(out, "BINARY-RAN") {
			t.Errorf("agent-mcp under the home did not run in the sandbox: %s", out)
		}
		if strings.Contains(out, "PRIVATE-NEIGHBOUR") {
			t.Errorf("a file beside agent-mcp's binary under the home was read: %s", out)
		}
	})
}

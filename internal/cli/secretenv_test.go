package cli

import (
	"slices"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/providers"
	"github.com/agent-mcp/agent-mcp/sandbox/proc"
)

// TestSecretEnv_coversEverySecretRead: every variable agent-mcp reads a
// secret from (the HTTP tokens serve reads, the providers' keys, the web
// search key) is in the list removed from commands' environment.
func TestSecretEnv_coversEverySecretRead(t *testing.T) {
	t.Parallel()
	want := append([]string{"AGENT_MCP_TOKEN", "AGENT_MCP_CLIENT_TOKENS", braveKeyEnv}, providers.KeyVars()...)
	for _, v := range want {
		if !slices.Contains(proc.SecretEnv, v) {
			t.Errorf("%s is read as a secret but not in proc.SecretEnv", v)
		}
	}
}

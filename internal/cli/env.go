package cli

import (
	"os"
	"strings"

	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/tools/shell"
)

// configDirEnv names agent-mcp's configuration directory (settings.json
// and the trust store), in place of $XDG_CONFIG_HOME/agent-mcp.
const configDirEnv = "AGENT_MCP_CONFIG_DIR"

// environ is what agent-mcp takes from its AGENT_MCP_* variables besides
// the tokens (tokens.go), chat's model and retry unit (chat.go) and the
// SearXNG instance (webflags.go): read here, once as a command sets up
// its flags, and passed down as options. No package below internal/cli
// reads an AGENT_MCP_* variable; docs/ names each (TestEnvDocumented).
type environ struct {
	// configDir is $AGENT_MCP_CONFIG_DIR; empty when unset.
	configDir string
	// disableBackground is $AGENT_MCP_DISABLE_BACKGROUND_TASKS set to a
	// true value (shell.Options.DisableBackground).
	disableBackground bool
	// layers is $AGENT_MCP_SANDBOX_LAYERS split at commas
	// (sandbox.Options.AllowedLayers); nil when unset.
	layers []string
	// hosts is $AGENT_MCP_EGRESS_HOSTS (sandbox.Options.Hosts, once
	// parsed); empty when unset.
	hosts string
	// roots is $AGENT_MCP_EGRESS_ROOTS (sandbox.Options.UpstreamRoots,
	// once read); empty when unset.
	roots string
}

// readEnviron reads the variables of [environ].
func readEnviron() environ {
	e := environ{configDir: os.Getenv(configDirEnv), hosts: os.Getenv(sandbox.HostsEnv), roots: os.Getenv(sandbox.RootsEnv)}
	switch strings.ToLower(os.Getenv(shell.DisableBackgroundEnv)) {
	case "1", "true", "yes", "on":
		e.disableBackground = true
	}
	if v, ok := os.LookupEnv(sandbox.LayersEnv); ok {
		e.layers = strings.Split(strings.ToLower(v), ",")
	}
	return e
}

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/sandbox/egress"
)

// stateHome is $XDG_STATE_HOME when it is an absolute path (where chat
// keeps its conversations, a credential path to every tool); empty means
// ~/.local/state.
func stateHome() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d
	}
	return ""
}

// egressConfig sets the sandbox's network mode and the egress proxy's
// domain rules from the settings: sandbox.network's allowedDomains and
// deniedDomains, and the WebFetch(domain:…) allow and deny rules.
func egressConfig(opts *sandbox.Options, s *settings.Settings) error {
	switch s.Sandbox.Network {
	case "on":
		opts.Network = sandbox.NetOn
	case "off":
		opts.Network = sandbox.NetOff
	default:
		opts.Network = sandbox.NetProxy
	}
	for _, d := range s.Sandbox.AllowedDomains {
		if err := egress.CheckPattern("sandbox.network.allowedDomains", d); err != nil {
			return err
		}
	}
	for _, d := range s.Sandbox.DeniedDomains {
		if err := egress.CheckPattern("sandbox.network.deniedDomains", d); err != nil {
			return err
		}
	}
	opts.AllowedDomains = append(slices.Clone(s.Sandbox.AllowedDomains), webFetchDomains(s.Rules, permissions.Allow)...)
	opts.DeniedDomains = append(slices.Clone(s.Sandbox.DeniedDomains), webFetchDomains(s.Rules, permissions.Deny)...)
	return nil
}

// webFetchDomains are the domains of the WebFetch(domain:…) rules of
// behaviour b.
func webFetchDomains(rules *permissions.RuleSet, b permissions.Behavior) []string {
	var out []string
	for _, r := range rules.Rules(b) {
		if d, ok := strings.CutPrefix(r.Specifier, "domain:"); ok && r.Tool == "WebFetch" && d != "" {
			out = append(out, d)
		}
	}
	return out
}

// secretsCheck says, in `sandbox check`, what is private to commands by
// default with this machine's layers, and how to open it (privateRows).
func secretsCheck(sb *sandbox.Sandbox, stdout io.Writer) {
	for _, r := range privateRows(sb) {
		fmt.Fprintf(stdout, "  --   %s\n", r.line)
	}
}

// secretFiles are the given secret files (empty ones left out) as
// absolute, clean paths.
func secretFiles(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if a, err := filepath.Abs(p); err == nil {
			out = append(out, a)
		}
	}
	return out
}

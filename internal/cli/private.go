package cli

import (
	"fmt"
	"strings"

	"github.com/agent-mcp/agent-mcp/sandbox"
)

// privateRow is one row of docs/sandbox.md's table "What is private by
// default, and how to open it", as `sandbox check` and `doctor` say it:
// doc is how the row's first cell begins there, line what this sandbox
// makes of it (and how to open it), held false where nothing holds it.
type privateRow struct {
	doc, line string
	held      bool
}

// privateRows are the table's rows for sb, in its order. The server's
// environment, the table's first row, is said by envLine.
func privateRows(sb *sandbox.Sandbox) []privateRow {
	confined := sb != nil && sb.Layers().Any()
	ns := confined && sb.Layers().Namespaces
	var rows []privateRow
	add := func(doc string, held bool, format string, a ...any) {
		rows = append(rows, privateRow{doc: doc, line: fmt.Sprintf(format, a...), held: held})
	}
	switch {
	case ns:
		add("credential paths", true, "credential paths: masked (keys, every host's own token, cloud, forge and registry logins, histories); open one with a Read(...) allow rule naming it")
	default:
		add("credential paths", false, "credential paths: not masked by Landlock alone (the permission rules still refuse commands that name them); a Read(...) allow rule naming one opens it")
	}
	switch {
	case ns:
		add("protected names", true, "protected names (hosts' and editors' configuration, .mcp.json, .envrc, git's files): read-only where they exist, moved aside when a command makes them; open one with an Edit(...) allow rule naming it")
	case confined:
		add("protected names", true, "protected names (hosts' and editors' configuration, .mcp.json, .envrc, git's files): moved aside when a command makes them, existing ones not held by Landlock alone; open one with an Edit(...) allow rule naming it")
	default:
		add("protected names", false, "protected names: only the Write and Edit tools refuse them (no sandbox)")
	}
	if home := sb.PrivateHome(); home != "" {
		add("the rest of the home directory", true, "home: %s is private to commands: only the toolchains' places, the working directories there and sandbox.filesystem.allowRead's paths are readable; open more with sandbox.filesystem.allowRead or a Read(~/path/**) allow rule", home)
	} else {
		add("the rest of the home directory", false, "home: readable to commands (no sandbox, or the home is a working directory or inside a writable root: the credential masks hold it)")
	}
	if ns {
		add("`sandbox.filesystem.denyRead` paths", true, "sandbox.filesystem.denyRead: the paths it names are masked")
	} else {
		add("`sandbox.filesystem.denyRead` paths", false, "sandbox.filesystem.denyRead: not held by Landlock alone inside a readable place (unreadable under the private home)")
	}
	net := map[sandbox.NetMode]string{
		sandbox.NetProxy: "through the egress proxy (allowed domains, a question for the rest); open a host with sandbox.network.allowedDomains or a WebFetch(domain:...) allow rule",
		sandbox.NetOff:   "off (sandbox.network false)",
		sandbox.NetOn:    "unrestricted",
	}[sb.Network()]
	if note := sb.NetworkNote(); note != "" {
		net += "\n       " + note
	}
	add("the network", sb.HoldsNetwork(), "network: %s", net)
	switch sb.Network() {
	case sandbox.NetProxy:
		named := ""
		if ports := sb.EgressRules().LoopbackPorts(); len(ports) > 0 {
			var s []string
			for _, p := range ports {
				s = append(s, p.String())
			}
			named = "; open now: " + strings.Join(s, ", ")
		}
		add("the host's own loopback", true, `the host's loopback: private (localhost reaches the servers of this session's own commands); open a port with sandbox.network.allowedDomains ("localhost:5432")%s`, named)
	case sandbox.NetOff:
		add("the host's own loopback", true, "the host's loopback: private (the network is off)")
	default:
		add("the host's own loopback", false, "the host's loopback: reachable (the network is unrestricted)")
	}
	return rows
}

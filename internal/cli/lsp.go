package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

// lspServers are the language servers in effect for project: the
// built-in defaults found on PATH, then the project's .lsp.json (only
// when the workspace is trusted: a server is a command the repository
// would run), then the settings' lspServers; none with --lsp off.
func (w *workspaceFlags) lspServers(perm *permissionSetup, project string) ([]lsp.ServerConfig, error) {
	switch w.lsp {
	case "off":
		return nil, nil
	case "", "auto":
	default:
		return nil, fmt.Errorf("--lsp %q: want auto (the configured servers and those found on PATH) or off", w.lsp)
	}
	var configured []lsp.ServerConfig
	if perm.settings.WorkspaceTrusted {
		fromFile, err := lsp.ReadProjectFile(project)
		if err != nil {
			return nil, err
		}
		configured = append(configured, fromFile...)
	}
	for _, e := range perm.settings.LSPServers {
		c, err := lsp.ParseServers(e.Source, map[string]json.RawMessage{e.Name: e.Entry})
		if err != nil {
			return nil, err
		}
		configured = append(configured, c...)
	}
	return lsp.Resolve(configured, true, lsp.LookPath), nil
}

// lspService is the language-server service of a run; nil when no
// server is usable.
func (w *workspaceFlags) lspService(perm *permissionSetup, project string) (*lsp.Service, error) {
	servers, err := w.lspServers(perm, project)
	if err != nil {
		return nil, err
	}
	return lsp.New(lsp.Options{Servers: servers, Sandbox: perm.sandbox, Excluded: perm.excluded.Match, EnvAllow: perm.settings.Sandbox.EnvAllow, DiagnosticsWait: perm.settings.LSPDiagnosticsWait}), nil
}

// printLSPServers lists the language servers for `tools` and `sandbox
// check`.
func printLSPServers(out io.Writer, servers []lsp.ServerConfig, mode string) {
	if mode == "off" {
		fmt.Fprintln(out, "language servers: off (--lsp off)")
		return
	}
	if len(servers) == 0 {
		fmt.Fprintln(out, "language servers: none configured or found on PATH (gopls, typescript-language-server, pyright-langserver, basedpyright-langserver, rust-analyzer, clangd)")
		return
	}
	fmt.Fprintln(out, "language servers:")
	for _, s := range servers {
		fmt.Fprintln(out, "  "+s.Describe())
	}
}

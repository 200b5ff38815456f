package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

// The LSP tool is checked as Read is: a Read deny rule refuses a call on a
// file it covers, and leaves such files out of an answer, counted.
func TestLSPToolHonoursReadDenyRules(t *testing.T) {
	t.Parallel()
	svc := goService(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rs := &permissions.RuleSet{}
	if err := rs.AddText(permissions.Deny, []string{"Read(./secret/**)"}, "test", permissions.Anchors{Root: dir, Cwd: dir, Home: "/nonexistent"}); err != nil {
		t.Fatal(err)
	}
	e := tooltest.New(t, []*tools.Tool{lsp.Tool(svc)}, tooltest.Options{
		Session: tools.SessionOptions{Cwd: dir},
		Permit:  permit.New(permit.Options{Rules: rs}),
	})
	put(t, dir, "go.mod", goMod)
	for _, d := range []string{"lib", "secret"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(t, dir, "lib/lib.go", "package lib\n\n// Helper helps.\nfunc Helper() int { return 1 }\n")
	put(t, dir, "main.go", "package main\n\nimport \"example.com/m/lib\"\n\nfunc main() { println(lib.Helper()) }\n")
	put(t, dir, "secret/s.go", "package secret\n\nimport \"example.com/m/lib\"\n\nvar S = lib.Helper()\n")

	e.Fail("LSP", map[string]any{"operation": "hover", "filePath": "secret/s.go", "line": 5, "character": 14}, "denied")
	res := e.OK("LSP", map[string]any{"operation": "findReferences", "filePath": "lib/lib.go", "line": 4, "character": 6})
	if !strings.Contains(res.Text, "main.go:5:27") || !strings.Contains(res.Text, "(1 results in files a Read deny rule covers are not shown.)") {
		t.Errorf("findReferences with secret/ denied:\n%s", res.Text)
	}
	if strings.Contains(res.Text, "s.go") {
		t.Errorf("a denied file is shown:\n%s", res.Text)
	}
}

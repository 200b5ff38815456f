package lsp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

// needServer returns the path of command, skipping the test where it is
// missing, except in CI, which installs it (.ci/run).
func needServer(t testing.TB, command string) string {
	t.Helper()
	p, err := exec.LookPath(command)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not on PATH in CI: .ci/run installs it", command)
		}
		t.Skipf("%s is not on PATH", command)
	}
	return p
}

// lspEnv is a session whose Write, Edit and LSP tools use svc, wired as
// the product wires them (tools/builtin).
func lspEnv(t testing.TB, svc *lsp.Service) *tooltest.Env {
	t.Helper()
	var ts []*tools.Tool
	for _, tl := range builtin.Tools(builtin.Options{LSP: svc}) {
		switch tl.Name {
		case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "LSP":
			ts = append(ts, tl)
		}
	}
	return tooltest.New(t, ts, tooltest.Options{})
}

// goService is the service with gopls as the built-in default finds it;
// the wait is long, as the test waits on gopls's answer, not on time.
func goService(t testing.TB) *lsp.Service {
	t.Helper()
	needServer(t, "gopls")
	svc := lsp.New(lsp.Options{Servers: lsp.Resolve(nil, true, lsp.LookPath), DiagnosticsWait: 20 * time.Second})
	if svc == nil || !svc.Handles("x.go") {
		t.Fatal("gopls is on PATH but the service does not handle .go files")
	}
	return svc
}

const (
	goMod  = "module example.com/m\n\ngo 1.22\n"
	utilGo = "package main\n\n// Helper says hello.\nfunc Helper() string { return \"hello\" }\n\n// Greeter greets.\ntype Greeter interface{ Greet() string }\n\ntype english struct{}\n\nfunc (english) Greet() string { return Helper() }\n"
	mainGo = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(Helper())\n}\n\nvar broken int = \"pre-existing\"\n"
)

func put(t testing.TB, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGoplsDiagnosticsAfterChanges(t *testing.T) {
	t.Parallel()
	svc := goService(t)
	e := lspEnv(t, svc)
	dir := e.Dir()
	put(t, dir, "go.mod", goMod)
	put(t, dir, "util.go", utilGo)
	put(t, dir, "main.go", mainGo)
	e.OK("Read", map[string]any{"file_path": "main.go"})

	// An edit calling an undefined function: its error, at its line; the
	// pre-existing error below it (moved down a line) is not repeated.
	res := e.OK("Edit", map[string]any{"file_path": "main.go", "old_string": "\tfmt.Println(Helper())\n", "new_string": "\tfmt.Println(Helper())\n\tundefinedFn()\n"})
	want := "<new-diagnostics>The following new diagnostic issues were detected:\n\nmain.go:\n  ✘ [Line 7:2] undefined: undefinedFn"
	if !strings.Contains(res.Text, want) || !strings.HasSuffix(res.Text, "</new-diagnostics>") {
		t.Fatalf("Edit result lacks the new diagnostic %q:\n%s", want, res.Text)
	}
	if block := res.Text[strings.Index(res.Text, "<new-diagnostics>"):]; strings.Contains(block, "pre-existing") || strings.Count(block, "✘") != 1 {
		t.Errorf("the pre-existing error was repeated, or more than one error shown:\n%s", res.Text)
	}

	// The edit that fixes it: nothing new.
	res = e.OK("Edit", map[string]any{"file_path": "main.go", "old_string": "\tundefinedFn()\n", "new_string": ""})
	if strings.Contains(res.Text, "diagnostic") {
		t.Errorf("the fixing edit reports diagnostics:\n%s", res.Text)
	}

	// A Write of a new file with a syntax error: the error.
	res = e.OK("Write", map[string]any{"file_path": "bad.go", "content": "package main\n\nfunc bad() {\n\treturn 1 +\n}\n"})
	if !strings.Contains(res.Text, "<new-diagnostics>") || !strings.Contains(res.Text, "bad.go:\n  ✘ [Line") {
		t.Errorf("Write of a syntax error reports none:\n%s", res.Text)
	}
}

func TestGoplsNavigation(t *testing.T) {
	t.Parallel()
	svc := goService(t)
	e := lspEnv(t, svc)
	dir := e.Dir()
	put(t, dir, "go.mod", goMod)
	put(t, dir, "util.go", utilGo)
	put(t, dir, "main.go", strings.Replace(mainGo, "var broken int = \"pre-existing\"\n", "func again() string { return Helper() }\n", 1))

	// Helper is used at main.go:6:14 and main.go:9:30, defined at util.go:4:6.
	res := e.OK("LSP", map[string]any{"operation": "goToDefinition", "filePath": "main.go", "line": 6, "character": 14})
	if !strings.HasPrefix(res.Text, "util.go:4:6: func Helper() string") {
		t.Errorf("goToDefinition: %q, want util.go:4:6 with its line", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "findReferences", "filePath": "util.go", "line": 4, "character": 6})
	for _, w := range []string{"util.go:4:6", "main.go:6:14: fmt.Println(Helper())", "main.go:9:30"} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("findReferences lacks %q:\n%s", w, res.Text)
		}
	}
	res = e.OK("LSP", map[string]any{"operation": "hover", "filePath": "main.go", "line": 6, "character": 14})
	if !strings.Contains(res.Text, "func Helper() string") || !strings.Contains(res.Text, "Helper says hello.") {
		t.Errorf("hover: %q", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "documentSymbol", "filePath": "main.go", "line": 1, "character": 1})
	if !strings.Contains(res.Text, "main.go:5:6 function main") || !strings.Contains(res.Text, "main.go:9:6 function again") {
		t.Errorf("documentSymbol: %q", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "incomingCalls", "filePath": "util.go", "line": 4, "character": 6})
	if !strings.Contains(res.Text, "main.go:6:14 in main") || !strings.Contains(res.Text, "main.go:9:30 in again") {
		t.Errorf("incomingCalls: %q", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "workspaceSymbol", "filePath": "main.go", "line": 1, "character": 1, "query": "Helper"})
	if !strings.Contains(res.Text, "util.go:4:6 function Helper") {
		t.Errorf("workspaceSymbol: %q", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "goToImplementation", "filePath": "util.go", "line": 7, "character": 6})
	if !strings.Contains(res.Text, "util.go:9:6: type english struct{}") {
		t.Errorf("goToImplementation: %q", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "prepareCallHierarchy", "filePath": "util.go", "line": 4, "character": 6})
	if !strings.HasPrefix(res.Text, "util.go:4:6 function Helper") {
		t.Errorf("prepareCallHierarchy: %q", res.Text)
	}
	res = e.OK("LSP", map[string]any{"operation": "outgoingCalls", "filePath": "util.go", "line": 11, "character": 16})
	if !strings.Contains(res.Text, "util.go:4:6 function Helper") {
		t.Errorf("outgoingCalls: %q", res.Text)
	}
	e.Fail("LSP", map[string]any{"operation": "hover", "filePath": "main.go", "line": 0, "character": 1}, "line")
}

func TestGoplsRestartedAfterCrash(t *testing.T) {
	t.Parallel()
	svc := goService(t)
	e := lspEnv(t, svc)
	dir := e.Dir()
	put(t, dir, "go.mod", goMod)
	put(t, dir, "util.go", utilGo)
	put(t, dir, "main.go", strings.Replace(mainGo, "var broken int = \"pre-existing\"\n", "", 1))
	e.OK("Read", map[string]any{"file_path": "main.go"})
	e.OK("Edit", map[string]any{"file_path": "main.go", "old_string": "Println(Helper())", "new_string": "Println(Helper(), 1)"})
	st := svc.Status(e.Session)
	if len(st) != 1 || st[0].PID == 0 {
		t.Fatalf("status after the first edit: %+v", st)
	}
	pid := st[0].PID
	if err := killProcess(pid); err != nil {
		t.Fatal(err)
	}
	// The next edit finds it gone and starts it again.
	res := e.OK("Edit", map[string]any{"file_path": "main.go", "old_string": "Println(Helper(), 1)", "new_string": "Println(Helper(), missing)"})
	if !strings.Contains(res.Text, "undefined: missing") {
		t.Errorf("no diagnostics after gopls was killed:\n%s", res.Text)
	}
	st = svc.Status(e.Session)
	if len(st) != 1 || st[0].PID == 0 || st[0].PID == pid || st[0].Starts != 2 {
		t.Errorf("status after the restart: %+v (killed %d)", st, pid)
	}
	// The session's end stops it.
	if err := e.Session.Close(); err != nil {
		t.Fatal(err)
	}
	if processAlive(st[0].PID) {
		t.Errorf("gopls (pid %d) outlived its session", st[0].PID)
	}
}

// Without gopls on PATH nothing changes: no server, no tool, the same
// result text.
func TestNoServerChangesNothing(t *testing.T) {
	t.Parallel()
	servers := lsp.Resolve(nil, true, func(string) (string, error) { return "", exec.ErrNotFound })
	if svc := lsp.New(lsp.Options{Servers: servers}); svc != nil || lsp.Tool(svc) != nil {
		t.Fatalf("a service without servers: %v", svc)
	}
	e := lspEnv(t, nil)
	put(t, e.Dir(), "main.go", mainGo)
	e.OK("Read", map[string]any{"file_path": "main.go"})
	res := e.OK("Edit", map[string]any{"file_path": "main.go", "old_string": "Helper()", "new_string": "undefinedFn()"})
	if strings.Contains(res.Text, "diagnostic") || strings.Contains(res.Text, "\n\n(") {
		t.Errorf("an edit without a server mentions diagnostics:\n%s", res.Text)
	}
}

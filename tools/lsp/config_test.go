package lsp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

func TestParseServersNamesTheBadField(t *testing.T) {
	t.Parallel()
	cases := []struct{ entry, want string }{
		{`{"extensionToLanguage": {".go": "go"}}`, "lspServers.x.command: must name"},
		{`{"command": "gopls"}`, "lspServers.x.extensionToLanguage: must map at least one"},
		{`{"command": "gopls", "extensionToLanguage": {"go": "go"}}`, `extensionToLanguage: "go": "go": want an extension with its dot`},
		{`{"command": "gopls", "extensionToLanguage": {".go": "go"}, "transport": "socket"}`, `transport: "socket" is not supported`},
		{`{"command": "gopls", "extensionToLanguage": {".go": "go"}, "colour": 1}`, `unknown key "colour"`},
		{`{"command": ["gopls"], "extensionToLanguage": {".go": "go"}}`, "lspServers.x"},
		{`"gopls"`, "want an object"},
	}
	for _, c := range cases {
		_, err := lsp.ParseServers("settings.json", map[string]json.RawMessage{"x": json.RawMessage(c.entry)})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "settings.json: ") {
			t.Errorf("%s: error %v, want one naming the source and %q", c.entry, err, c.want)
		}
	}
	ok, err := lsp.ParseServers("s", map[string]json.RawMessage{"go": json.RawMessage(
		`{"command": "gopls", "args": ["serve"], "extensionToLanguage": {".go": "go"}, "initializationOptions": {"a": 1}, "startupTimeout": 5}`)})
	if err != nil || len(ok) != 1 || ok[0].Name != "go" || ok[0].Args[0] != "serve" || string(ok[0].InitializationOptions) != `{"a": 1}` {
		t.Errorf("a good entry: %+v %v", ok, err)
	}
}

func TestProjectFileAndResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if got, err := lsp.ReadProjectFile(dir); got != nil || err != nil {
		t.Fatalf("no .lsp.json: %v %v", got, err)
	}
	// Claude Code's form, and its plugin form nested under lspServers.
	for _, body := range []string{
		`{"py": {"command": "mypy-ls", "extensionToLanguage": {".py": "python"}}}`,
		`{"lspServers": {"py": {"command": "mypy-ls", "extensionToLanguage": {".py": "python"}}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, ".lsp.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := lsp.ReadProjectFile(dir)
		if err != nil || len(got) != 1 || got[0].Command != "mypy-ls" {
			t.Fatalf("%s: %+v %v", body, got, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".lsp.json"), []byte(`[1]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lsp.ReadProjectFile(dir); err == nil || !strings.Contains(err.Error(), ".lsp.json: not a JSON object") {
		t.Errorf("a bad .lsp.json: %v", err)
	}

	// Defaults come from what PATH has; a configured server of the same
	// name replaces one; one whose command is missing is listed, unused.
	look := func(name string) (string, error) {
		if name == "gopls" || name == "basedpyright-langserver" {
			return "/bin/" + name, nil
		}
		return "", exec.ErrNotFound
	}
	servers := lsp.Resolve([]lsp.ServerConfig{{Name: "go", Command: "my-gopls", ExtensionToLanguage: map[string]string{".go": "go"}}}, true, look)
	names := map[string]lsp.ServerConfig{}
	for _, s := range servers {
		names[s.Name] = s
	}
	if len(servers) != 2 || names["python"].Command != "basedpyright-langserver" || names["go"].Command != "my-gopls" || names["go"].Path != "" {
		t.Fatalf("resolved: %+v", servers)
	}
	svc := lsp.New(lsp.Options{Servers: servers})
	if svc == nil || !svc.Handles("/w/a.py") || svc.Handles("/w/a.go") || svc.Handles("/w/a.rs") {
		t.Errorf("handles: py %v go %v", svc.Handles("/w/a.py"), svc.Handles("/w/a.go"))
	}
	if d := names["python"].Describe(); d != "python: basedpyright-langserver --stdio (/bin/basedpyright-langserver) for .py .pyi [default]" {
		t.Errorf("describe: %q", d)
	}
}

// The LSP tool's schema is Claude Code's: operation (its nine), filePath,
// line and character required; query optional; hosts get a search hint.
func TestToolSchema(t *testing.T) {
	t.Parallel()
	svc := lsp.New(lsp.Options{Servers: []lsp.ServerConfig{{Name: "go", Command: "gopls", Path: "/bin/gopls", ExtensionToLanguage: map[string]string{".go": "go"}}}})
	tool := lsp.Tool(svc)
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []string
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatal(err)
	}
	if strings.Join(sc.Required, ",") != "operation,filePath,line,character" {
		t.Errorf("required %v", sc.Required)
	}
	if got := strings.Join(sc.Properties["operation"].Enum, ","); got != "goToDefinition,findReferences,hover,documentSymbol,workspaceSymbol,goToImplementation,prepareCallHierarchy,incomingCalls,outgoingCalls" {
		t.Errorf("operations %s", got)
	}
	if sc.Properties["line"].Type != "integer" || sc.Properties["character"].Type != "integer" || sc.Properties["query"].Type != "string" {
		t.Errorf("properties %+v", sc.Properties)
	}
	if !tool.ReadOnly || tool.SearchHint == "" || len(tool.SearchHint) > 60 {
		t.Errorf("read-only %v, hint %q", tool.ReadOnly, tool.SearchHint)
	}
}

package builtin

import (
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

// TestInputSchemasDescribeEveryProperty: the model reads a property's
// description (from its field's jsonschema tag, or set where it quotes a
// constant) to know what to send; every object refuses unknown keys.
func TestInputSchemasDescribeEveryProperty(t *testing.T) {
	t.Parallel()
	var walk func(tool, path string, s *jsonschema.Schema)
	walk = func(tool, path string, s *jsonschema.Schema) {
		if s.Type == "object" && (s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil) {
			t.Errorf("%s: %s accepts unknown keys", tool, path)
		}
		for name, p := range s.Properties {
			if p.Description == "" {
				t.Errorf("%s: property %s%s has no description", tool, path, name)
			}
			if p.Items != nil && p.Items.Type == "object" {
				walk(tool, path+name+"[].", p.Items)
			}
		}
	}
	for _, tool := range allTools(t) {
		walk(tool.Name, "", tool.InputSchema)
	}
}

// TestSearchHintsAndCore: every built-in has a short search hint for hosts
// that load tools on demand, and exactly the tools a coding model uses in
// nearly every task are core (loaded up front).
func TestSearchHintsAndCore(t *testing.T) {
	t.Parallel()
	want := map[string]bool{"Read": true, "Write": true, "Edit": true, "MultiEdit": true,
		"Glob": true, "Grep": true, "Bash": true, "TaskOutput": true}
	for _, tool := range Tools(Options{}) {
		if n := len(tool.SearchHint); n == 0 || n > 60 {
			t.Errorf("%s: SearchHint %q: want a few words, at most 60 characters", tool.Name, tool.SearchHint)
		}
		if tool.Core != want[tool.Name] {
			t.Errorf("%s: Core = %v, want %v", tool.Name, tool.Core, want[tool.Name])
		}
	}
}

// TestInputSchemasResolve: every built-in's input schema, every node of
// it, resolves. The pool resolves a built-in's schema on the tool's first
// call (a server answers initialize without doing it for every tool), so
// a schema that does not resolve is caught here rather than by a call.
func TestInputSchemasResolve(t *testing.T) {
	t.Parallel()
	var walk func(tool, path string, s *jsonschema.Schema)
	walk = func(tool, path string, s *jsonschema.Schema) {
		if s == nil {
			return
		}
		if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s: %s does not resolve: %v", tool, path, err)
		}
		for name, p := range s.Properties {
			walk(tool, path+"."+name, p)
		}
		walk(tool, path+"[]", s.Items)
	}
	for _, tool := range allTools(t) {
		walk(tool.Name, "input", tool.InputSchema)
	}
}

// allTools is every built-in, the LSP tool included (it is listed only
// where a language server is configured).
func allTools(t *testing.T) []*tools.Tool {
	svc := lsp.New(lsp.Options{Servers: []lsp.ServerConfig{{Name: "go", Command: "gopls", Path: "/usr/bin/gopls", ExtensionToLanguage: map[string]string{".go": "go"}}}})
	ts := Tools(Options{LSP: svc})
	if !slices.ContainsFunc(ts, func(tool *tools.Tool) bool { return tool.Name == "LSP" }) {
		t.Fatal("no LSP tool though a language server is configured")
	}
	return ts
}

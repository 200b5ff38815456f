package builtin

import (
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
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
	for _, tool := range Tools(Options{}) {
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

package orchestrator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

type validateInput struct {
	Path   string   `json:"file_path"`
	Limit  *int     `json:"limit,omitempty"`
	Ratio  *float64 `json:"ratio,omitempty"`
	Mode   string   `json:"mode,omitempty"`
	Flags  []string `json:"flags,omitempty"`
	Strict bool     `json:"strict,omitempty"`
	Items  []item   `json:"items,omitempty"`
}

type item struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

func validateTool() tools.Tool {
	return tools.New(tools.Spec[validateInput]{
		Name: "V",
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "mode").Enum = []any{"a", "b"}
			tools.Prop(s, "limit").Minimum = tools.Ptr(1.0)
			tools.Prop(tools.Prop(s, "items").Items, "kind").Enum = []any{"a", "b"}
			tools.Prop(tools.Prop(s, "items").Items, "name").MinLength = tools.Ptr(1)
		},
		Run: func(context.Context, *validateInput, *tools.UseContext, tools.Progress) (*tools.Result, error) {
			return &tools.Result{Text: "ok"}, nil
		},
	})
}

func TestSchemaValidation(t *testing.T) {
	v, err := newInputValidator(validateTool().Schema())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		input string
		want  []string // substrings, each must appear; nil means valid
	}{
		{"valid minimal", `{"file_path":"a"}`, nil},
		{"valid full", `{"file_path":"a","limit":3,"ratio":0.5,"mode":"b","flags":["x"],"strict":true}`, nil},
		{"empty arguments", ``, []string{`missing required parameter "file_path" (expected a string)`}},
		{"not an object", `[1,2]`, []string{"arguments must be a JSON object"}},
		{"unknown key with close name", `{"file_path":"a","filePath":"b"}`, []string{`unknown parameter "filePath" (did you mean "file_path"?)`}},
		{"unknown key lists accepted", `{"file_path":"a","zzz":1}`, []string{`unknown parameter "zzz" (accepted: file_path, flags, items, limit, mode, ratio, strict)`}},
		{"wrong type", `{"file_path":7}`, []string{`parameter "file_path" must be a string, got an integer`}},
		{"fraction for integer", `{"file_path":"a","limit":1.5}`, []string{`parameter "limit" must be an integer, got a number`}},
		{"string for boolean", `{"file_path":"a","strict":"yes"}`, []string{`parameter "strict" must be a boolean, got a string`}},
		{"null for string", `{"file_path":null}`, []string{`parameter "file_path" must be a string, got null`}},
		{"enum", `{"file_path":"a","mode":"c"}`, []string{`parameter "mode"`}},
		{"minimum", `{"file_path":"a","limit":0}`, []string{`parameter "limit" must be at least 1, got 0`}},
		{"empty string", `{"file_path":"a","items":[{"name":"","kind":"a"}]}`, []string{`parameter "items[0].name" must not be empty`}},
		{"array item type", `{"file_path":"a","flags":[1]}`, []string{`parameter "flags[0]" must be a string, got an integer`}},
		{"nested objects are named by path", `{"file_path":"a","items":[{"name":"x","kind":"a"},{"kind":"z","extra":1},{"name":3,"kind":"b"}]}`, []string{
			`missing required parameter "items[1].name" (expected a string)`,
			`unknown parameter "items[1].extra" (accepted: kind, name)`,
			`parameter "items[1].kind"`,
			`parameter "items[2].name" must be a string, got an integer`}},
		{"every problem named", `{"limit":"x","bogus":true}`, []string{
			`missing required parameter "file_path"`, `unknown parameter "bogus"`, `parameter "limit" must be an integer, got a string`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := v.validate("V", json.RawMessage(c.input))
			if c.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid input accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "Invalid input for V") {
				t.Errorf("error %q does not name the tool", err)
			}
		})
	}
}

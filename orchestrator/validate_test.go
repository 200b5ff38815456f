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

func validateTool() *tools.Tool {
	return tools.New(tools.Tool{
		Name: "V",
	}, tools.Handler[validateInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "mode").Enum = []any{"a", "b"}
			tools.Prop(s, "limit").Minimum = tools.Ptr(1.0)
			tools.Prop(tools.Prop(s, "items").Items, "kind").Enum = []any{"a", "b"}
			tools.Prop(tools.Prop(s, "items").Items, "name").MinLength = tools.Ptr(1)
		},
		Call: func(context.Context, *validateInput, *tools.UseContext, tools.Progress) (*tools.Result, error) {
			return &tools.Result{Text: "ok"}, nil
		},
	})
}

func TestSchemaValidation(t *testing.T) {
	t.Parallel()
	v, err := newInputValidator(validateTool().InputSchema)
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

// TestSchemaValidation_long_strings checks inputs large enough that their
// long strings are left out of the decoded copy (their type and length
// judged on the JSON text): every verdict and message is the one a full
// decode gives, at the length bounds too, whatever the escapes.
func TestSchemaValidation_long_strings(t *testing.T) {
	type longItem struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	}
	type longInput struct {
		Content string     `json:"content"`
		Mode    string     `json:"mode,omitempty"`
		Path    string     `json:"path,omitempty"`
		Limit   *float64   `json:"limit,omitempty"`
		Items   []longItem `json:"items,omitempty"`
	}
	// Each unit is 10 characters whatever its spelling.
	units := map[string]string{
		"plain":          `abcdefghij`,
		"escapes":        `a\nb\tc\"d\\ef`,
		"unicode_escape": `\u00e9\u4e2d\u0041bcdefgh`,
		"surrogate_pair": `\ud83d\ude00bcdefghij`,
		"lone_surrogate": `\ud800\u0041bcdefghi`,
		"utf8":           "é中😀abcdefg",
		"invalid_utf8":   "\xff\xfeabcdefgh",
	}
	const n = 10_000 // units: over 64KB of input, 100000 characters
	tool := tools.New(tools.Tool{
		Name: "V",
	}, tools.Handler[longInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "content").MaxLength = tools.Ptr(10 * n)
			tools.Prop(s, "content").MinLength = tools.Ptr(1)
			tools.Prop(s, "mode").Enum = []any{"a", "b"}
			tools.Prop(s, "path").Pattern = "^/"
			tools.Prop(tools.Prop(s, "items").Items, "name").MaxLength = tools.Ptr(10 * n)
		},
		Call: func(context.Context, *longInput, *tools.UseContext, tools.Progress) (*tools.Result, error) {
			return &tools.Result{Text: "ok"}, nil
		},
	})
	v, err := newInputValidator(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	// fullDecode is the validation of every input before long strings
	// were left out: the whole input decoded.
	fullDecode := func(raw string) []string {
		var args map[string]any
		if err := json.Unmarshal([]byte(raw), &args); err != nil || args == nil {
			return []string{"arguments must be a JSON object"}
		}
		var problems []string
		v.checkObject("", v.schema, args, nil, &problems)
		return problems
	}
	for name, unit := range units {
		exact := `"` + strings.Repeat(unit, n) + `"`
		over := `"` + strings.Repeat(unit, n) + `x"`
		for _, c := range []struct {
			name, input string
			valid       bool
		}{
			{"at_the_bound", `{"content":` + exact + `}`, true},
			{"over_the_bound", `{"content":` + over + `}`, false},
			{"nested_over", `{"content":"x","items":[{"name":` + exact + `},{"name":` + over + `}]}`, false},
			{"enum", `{"content":"x","mode":` + exact + `}`, false},
			{"pattern", `{"content":` + exact + `,"path":` + exact + `}`, false},
			{"pattern_met", `{"content":"x","path":"/` + exact[1:] + `}`, true},
			{"wrong_type", `{"content":"x","limit":` + exact + `}`, false},
			{"long_unknown_value", `{"content":"x","other":` + exact + `}`, false},
			{"long_name", `{"content":"x",` + exact + `:1}`, false},
			{"placeholder_lookalike", `{"content":"\u0000long-0","items":[{"name":` + over + `}]}`, false},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				if len(c.input) <= longInputBytes {
					t.Fatalf("the input is %d bytes, too short to leave strings out", len(c.input))
				}
				want := fullDecode(c.input)
				if (len(want) == 0) != c.valid {
					t.Fatalf("the full decode gives %q, the case expects valid=%v", want, c.valid)
				}
				err := v.validate("V", json.RawMessage(c.input))
				var got []string
				if ve, ok := err.(*ValidationError); ok {
					got = ve.Problems
				} else if err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("problems\n%q\nwant (full decode)\n%q", got, want)
				}
			})
		}
	}
}

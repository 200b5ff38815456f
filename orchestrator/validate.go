package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputValidator checks a call's arguments against a tool's input schema and
// reports every violation at once, each naming its field.
type inputValidator struct {
	schema   *jsonschema.Schema
	props    map[string]*jsonschema.Resolved
	required []string
}

func newInputValidator(s *jsonschema.Schema) (*inputValidator, error) {
	v := &inputValidator{schema: s, props: map[string]*jsonschema.Resolved{}, required: s.Required}
	for name, ps := range s.Properties {
		r, err := ps.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		v.props[name] = r
	}
	return v, nil
}

// ValidationError lists what was wrong with a call's arguments.
type ValidationError struct {
	Tool     string
	Problems []string
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("Invalid input for %s: %s", e.Tool, e.Problems[0])
	}
	return fmt.Sprintf("Invalid input for %s:\n- %s", e.Tool, strings.Join(e.Problems, "\n- "))
}

func (v *inputValidator) validate(tool string, raw json.RawMessage) error {
	var args map[string]any
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		args = map[string]any{}
	} else if err := json.Unmarshal(trimmed, &args); err != nil || args == nil {
		return &ValidationError{Tool: tool, Problems: []string{"arguments must be a JSON object"}}
	}
	var problems []string
	for _, name := range v.required {
		if _, ok := args[name]; !ok {
			problems = append(problems, fmt.Sprintf("missing required parameter %q (expected %s)", name, describeType(v.schema.Properties[name])))
		}
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		val := args[name]
		ps, ok := v.schema.Properties[name]
		if !ok && allowsExtra(v.schema) {
			continue
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("unknown parameter %q%s", name, v.suggest(name)))
			continue
		}
		if want := describeType(ps); !typeMatches(ps, val) {
			problems = append(problems, fmt.Sprintf("parameter %q must be %s, got %s", name, want, jsonKind(val)))
			continue
		}
		if err := v.props[name].Validate(val); err != nil {
			problems = append(problems, fmt.Sprintf("parameter %q: %s", name, cleanSchemaError(err)))
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Tool: tool, Problems: problems}
	}
	return nil
}

// suggest names the accepted parameters, so a model can correct itself.
func (v *inputValidator) suggest(unknown string) string {
	names := make([]string, 0, len(v.schema.Properties))
	for n := range v.schema.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if strings.EqualFold(strings.ReplaceAll(n, "_", ""), strings.ReplaceAll(unknown, "_", "")) {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
	}
	return fmt.Sprintf(" (accepted: %s)", strings.Join(names, ", "))
}

func schemaTypes(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func describeType(s *jsonschema.Schema) string {
	ts := schemaTypes(s)
	if len(ts) == 0 {
		return "a value"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		switch t {
		case "integer", "object", "array":
			parts[i] = "an " + t
		default:
			parts[i] = "a " + t
		}
	}
	if s != nil && len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			b, _ := json.Marshal(e)
			vals[i] = string(b)
		}
		return strings.Join(parts, " or ") + " (one of " + strings.Join(vals, ", ") + ")"
	}
	return strings.Join(parts, " or ")
}

func typeMatches(s *jsonschema.Schema, val any) bool {
	ts := schemaTypes(s)
	if len(ts) == 0 {
		return true
	}
	for _, t := range ts {
		switch t {
		case "null":
			if val == nil {
				return true
			}
		case "boolean":
			if _, ok := val.(bool); ok {
				return true
			}
		case "string":
			if _, ok := val.(string); ok {
				return true
			}
		case "number":
			if _, ok := val.(float64); ok {
				return true
			}
		case "integer":
			if f, ok := val.(float64); ok && f == math.Trunc(f) && !math.IsInf(f, 0) {
				return true
			}
		case "array":
			if _, ok := val.([]any); ok {
				return true
			}
		case "object":
			if _, ok := val.(map[string]any); ok {
				return true
			}
		}
	}
	return false
}

func jsonKind(val any) string {
	switch x := val.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64:
		if x == math.Trunc(x) {
			return "an integer"
		}
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", val)
}

// cleanSchemaError keeps the jsonschema library's message but drops its
// internal "validating /properties/x:" prefixes that add nothing for a model.
func cleanSchemaError(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "validating root: ", "")
	return strings.TrimSpace(msg)
}

// allowsExtra reports whether s explicitly accepts properties it does not
// list (additionalProperties given and not false), as some upstream MCP
// tools' schemas do. Schemas that say nothing stay strict.
func allowsExtra(s *jsonschema.Schema) bool {
	if s.AdditionalProperties == nil {
		return false
	}
	b, err := json.Marshal(s.AdditionalProperties)
	if err != nil {
		return false
	}
	switch strings.ReplaceAll(string(b), " ", "") {
	case "false", `{"not":{}}`:
		return false
	}
	return true
}

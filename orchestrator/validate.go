package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
)

// inputValidator checks a call's arguments against a tool's input schema and
// reports every violation at once, each naming its field by path
// (`todos[0].status`), in a stable order.
type inputValidator struct {
	schema *jsonschema.Schema
	// resolved holds every schema node, resolved for the constraints the
	// walk does not check itself (enums, bounds, lengths, compositions).
	resolved map[*jsonschema.Schema]*jsonschema.Resolved
}

func newInputValidator(s *jsonschema.Schema) (*inputValidator, error) {
	v := &inputValidator{schema: s, resolved: map[*jsonschema.Schema]*jsonschema.Resolved{}}
	var walk func(path string, n *jsonschema.Schema) error
	walk = func(path string, n *jsonschema.Schema) error {
		if n == nil || v.resolved[n] != nil {
			return nil
		}
		r, err := n.Resolve(nil)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		v.resolved[n] = r
		for name, p := range n.Properties {
			if err := walk(path+"."+name, p); err != nil {
				return err
			}
		}
		return walk(path+"[]", n.Items)
	}
	for name, p := range s.Properties {
		if err := walk(name, p); err != nil {
			return nil, fmt.Errorf("property %s", err)
		}
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
	var long *largeargs.Strings
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		args = map[string]any{}
	} else {
		var short []byte
		short, long = withoutLongStrings(trimmed)
		if err := json.Unmarshal(short, &args); err != nil || args == nil {
			return &ValidationError{Tool: tool, Problems: []string{"arguments must be a JSON object"}}
		}
	}
	var problems []string
	v.checkObject("", v.schema, args, long, &problems)
	if len(problems) > 0 {
		return &ValidationError{Tool: tool, Problems: problems}
	}
	return nil
}

// checkObject reports missing required properties, unknown properties and
// each property's own problems, in a stable order.
func (v *inputValidator) checkObject(path string, s *jsonschema.Schema, obj map[string]any, long *largeargs.Strings, problems *[]string) {
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			*problems = append(*problems, fmt.Sprintf("missing required parameter %q (expected %s)", join(path, name), describeType(s.Properties[name])))
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ps, ok := s.Properties[name]
		if !ok {
			if !allowsExtra(s) {
				*problems = append(*problems, fmt.Sprintf("unknown parameter %q%s", join(path, name), suggest(s, name)))
			} else if p := foldedProperty(s, name); p != "" {
				// A decoder that matches names case-insensitively (Go's
				// encoding/json) would read it as p, while the permission
				// rules read p by its exact name.
				*problems = append(*problems, fmt.Sprintf("parameter %q differs from %q only in case", join(path, name), join(path, p)))
			}
			continue
		}
		v.checkValue(join(path, name), ps, obj[name], long, problems)
	}
}

// checkValue checks one value: its type first, then the members of objects
// and arrays the walk understands, then the schema's remaining constraints.
func (v *inputValidator) checkValue(path string, s *jsonschema.Schema, val any, long *largeargs.Strings, problems *[]string) {
	if !typeMatches(s, val) {
		*problems = append(*problems, fmt.Sprintf("parameter %q must be %s, got %s", path, describeType(s), jsonKind(val)))
		return
	}
	before := len(*problems)
	composite := len(s.AnyOf) > 0 || len(s.OneOf) > 0 || len(s.AllOf) > 0 || s.Not != nil || s.Ref != ""
	if str, ok := val.(string); ok && long != nil {
		if text, ok := long.Text(str); ok {
			// A long string left out of the decoded copy: its type and
			// length are all a plain string schema asks about; anything
			// more gets its text.
			if composite || len(s.Enum) > 0 || s.Const != nil || s.Pattern != "" || s.Format != "" {
				val, _ = largeargs.Unquote(text)
			} else {
				if msg := lengthProblem(s, largeargs.Runes(text[1:len(text)-1])); msg != "" {
					*problems = append(*problems, fmt.Sprintf("parameter %q %s", path, msg))
				}
				return
			}
		}
	}
	if !composite {
		switch x := val.(type) {
		case map[string]any:
			if len(s.Properties) > 0 {
				v.checkObject(path, s, x, long, problems)
			}
		case []any:
			if s.Items != nil {
				for i, item := range x {
					v.checkValue(fmt.Sprintf("%s[%d]", path, i), s.Items, item, long, problems)
				}
			}
		}
	}
	if len(*problems) > before {
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, val) }) {
		got, _ := json.Marshal(val)
		*problems = append(*problems, fmt.Sprintf("parameter %q must be %s, got %s", path, enumList(s.Enum), got))
		return
	}
	if msg := boundsProblem(s, val); msg != "" {
		*problems = append(*problems, fmt.Sprintf("parameter %q %s", path, msg))
		return
	}
	if r := v.resolved[s]; r != nil {
		if err := r.Validate(val); err != nil {
			*problems = append(*problems, fmt.Sprintf("parameter %q: %s", path, cleanSchemaError(err)))
		}
	}
}

// boundsProblem words a violated numeric, length or size bound, or returns "".
func boundsProblem(s *jsonschema.Schema, val any) string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch x := val.(type) {
	case float64:
		switch {
		case s.Minimum != nil && x < *s.Minimum:
			return fmt.Sprintf("must be at least %s, got %s", num(*s.Minimum), num(x))
		case s.ExclusiveMinimum != nil && x <= *s.ExclusiveMinimum:
			return fmt.Sprintf("must be greater than %s, got %s", num(*s.ExclusiveMinimum), num(x))
		case s.Maximum != nil && x > *s.Maximum:
			return fmt.Sprintf("must be at most %s, got %s", num(*s.Maximum), num(x))
		case s.ExclusiveMaximum != nil && x >= *s.ExclusiveMaximum:
			return fmt.Sprintf("must be less than %s, got %s", num(*s.ExclusiveMaximum), num(x))
		}
	case string:
		return lengthProblem(s, utf8.RuneCountInString(x))
	case []any:
		switch {
		case s.MinItems != nil && len(x) < *s.MinItems:
			return fmt.Sprintf("must have at least %s, got %d", plural(*s.MinItems, "item"), len(x))
		case s.MaxItems != nil && len(x) > *s.MaxItems:
			return fmt.Sprintf("must have at most %s, got %d", plural(*s.MaxItems, "item"), len(x))
		}
	}
	return ""
}

// lengthProblem words a violated length bound of a string of n
// characters, or returns "".
func lengthProblem(s *jsonschema.Schema, n int) string {
	switch {
	case s.MinLength != nil && n < *s.MinLength:
		if *s.MinLength == 1 {
			return "must not be empty"
		}
		return fmt.Sprintf("must be at least %d characters long, got %d", *s.MinLength, n)
	case s.MaxLength != nil && n > *s.MaxLength:
		return fmt.Sprintf("must be at most %d characters long, got %d", *s.MaxLength, n)
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// enumList renders allowed values: one of "a", "b" or "c".
func enumList(vals []any) string {
	parts := make([]string, len(vals))
	for i, e := range vals {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "one of " + strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// suggest names the accepted parameters, so a model can correct itself.
func suggest(s *jsonschema.Schema, unknown string) string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
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

// foldedProperty is the property of s that name spells in another case,
// or "".
func foldedProperty(s *jsonschema.Schema, name string) string {
	for p := range s.Properties {
		if strings.EqualFold(p, name) {
			return p
		}
	}
	return ""
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

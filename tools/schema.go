package tools

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor generates the input schema for In: an object that refuses
// unknown keys, whose optional pointer fields are described by their
// element type (models read "integer", not ["null","integer"]).
func schemaFor[In any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("generating input schema: %w", err)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("input schema must describe an object, got %q", s.Type)
	}
	dropNull(s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return s, nil
}

// dropNull rewrites {"type": ["null", T]} as {"type": T} throughout s.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		for _, t := range s.Types {
			if t != "null" {
				s.Type = t
			}
		}
		s.Types = nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
}

// Prop returns the schema of property name in s, panicking when it is
// missing: a Handler's Schema function naming a field that does not exist is a
// programming error.
func Prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic(fmt.Sprintf("schema has no property %q", name))
	}
	return p
}

// Describe sets property descriptions from a name → text map.
func Describe(s *jsonschema.Schema, descriptions map[string]string) {
	for name, d := range descriptions {
		Prop(s, name).Description = d
	}
}

// Default sets a property's documented default value.
func Default(s *jsonschema.Schema, name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	Prop(s, name).Default = b
}

// Ptr returns a pointer to v; handy for schema bounds.
func Ptr[T any](v T) *T { return &v }

// Package builtin lists agent-mcp's built-in tools. Adding a tool is one
// line in builtin.go plus the tool's own file, description and tests in
// its family package, and `go generate ./tools/builtin`: schemas_gen.go
// holds every built-in's input schema as JSON, handed out as
// [tools.Tool.InputSchemaJSON] so that a server marshals no schema to
// answer initialize or tools/list (TestInputSchemasGenerated fails when
// the file is out of date).
package builtin

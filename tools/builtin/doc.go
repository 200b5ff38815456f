// Package builtin lists agent-mcp's built-in tools. Adding a tool is one
// line in builtin.go plus the tool's own file, description and tests in
// its family package.
package builtin

package fs

import (
	"context"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Options configure the writing tools (Write, Edit, MultiEdit,
// NotebookEdit). The zero value is a tool without language servers.
type Options struct {
	// Diagnostics reports what a change did in the eyes of a language
	// server (package tools/lsp); nil for none.
	Diagnostics Diagnostics
}

// Diagnostics is a language-server view of changes.
type Diagnostics interface {
	// Check is called once a change of the file at path is written, with
	// its text before (nil when the file did not exist) and after. It
	// returns what the tool's result ends with: the diagnostics the change
	// introduced, a sentence when it could not tell, or "" (nothing new,
	// or no server for the file, when it returns at once). A notebook's
	// texts are its JSON.
	Check(ctx context.Context, s *tools.Session, path string, before, after []byte) string
}

// options returns the first of opts, or the zero Options.
// checkChange asks d about a change; "" without d.
func checkChange(ctx context.Context, d Diagnostics, s *tools.Session, path string, before, after []byte) string {
	if d == nil {
		return ""
	}
	return d.Check(ctx, s, path, before, after)
}

// Package fs holds the file tools: Read, Write, Edit, MultiEdit, LS and
// NotebookEdit. Each tool is one file with its model-facing description
// beside it (name.md, embedded) and its tests beside it (name_test.go).
//
// The tools share the session's record of which files were read and what
// they held (tools.Session.RecordFile), which is how writes refuse to
// clobber a file the caller has not seen.
package fs

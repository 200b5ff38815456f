// Package tools defines the one shape every agent-mcp tool has, and the
// per-session state tools share.
//
// A [Tool] is go-sdk's shape (mcp.Tool beside a typed handler): a struct
// of the facts that hold for every call (name, description, input schema,
// read-only, destructive, idempotent, open-world, concurrency-safe, result
// budget), each fail-closed at its zero value, and one handler. [New]
// builds a built-in from a typed [Handler]: the input schema is generated
// from the input struct (descriptions in its `jsonschema:"..."` tags) and
// always refuses unknown keys. [NewRaw] builds an upstream MCP server's
// tool, whose input stays raw JSON. Tools never see raw JSON otherwise:
// the orchestrator validates the arguments against [Tool.InputSchema],
// decodes them with [Tool.Decode] into an [Input] bound to the tool's
// handler, and asks that Input what depends on it ([Input.ReadOnly],
// [Input.ConcurrencySafe]) before it validates and runs it.
//
// [Session] holds what lives as long as one client's session: the current
// directory, the working directories, the files read and their fingerprints,
// the todo list, the permission mode, a private state directory, and slots
// in which tool families keep their own state (background tasks, caches).
//
// The built-in tools live in sub-packages by family (fs, search, shell, web,
// workflow), one file per tool with its description beside it; package
// builtin lists them all.
//
// Every tool that touches files implements [PathInput] on its input
// struct (Read: the file read; Write/Edit/MultiEdit/NotebookEdit: the file
// written, Write true; Glob/Grep/LS: the directory or file searched), so the
// permission check can apply Read/Edit rules and working-directory
// confinement. A tool that touches no file returns nil. An input without
// it is treated as touching unknown paths and is never allowed merely for
// being inside the working directories. In plan mode only read-only calls
// run, plus calls that are neither destructive nor open-world and whose
// input reports no paths (TodoWrite, ExitPlanMode). Writing tools should
// open files with confine.OpenFile (or the os.Root it gives), so a
// symlink swapped in after the check cannot lead outside the working
// directories. This package does not run tools: see package
// orchestrator for the pipeline every call goes through.
package tools

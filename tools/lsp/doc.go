// Package lsp is agent-mcp's language-server client: the compiler's view
// of the code for the file tools and the LSP tool.
//
// Servers are configured as Claude Code configures them: `lspServers` in
// settings and a project's .lsp.json (command, args, extensionToLanguage,
// env, initializationOptions, settings), over built-in defaults used when
// their command is on PATH (gopls, typescript-language-server,
// pyright-langserver or basedpyright-langserver, rust-analyzer, clangd).
// [Service] holds that configuration for the whole server; each session
// starts a server on the first file of its language, one per workspace
// root (the nearest directory with one of the server's root markers, such
// as go.mod, inside the working directory) and server, and stops them all
// when it closes (a session slot). A server runs project code (build
// scripts, `go list`), so it is started exactly as Bash starts a command:
// through the sandbox's launcher when the sandbox confines commands, and
// unconfined when it is off, and with the environment Bash's commands get
// (without agent-mcp's own secrets). A server that exits unexpectedly is
// started again on its next use, the first time at once and then after a
// backoff that doubles up to 30 s. A server holds at most 64 documents
// open, the least recently used closed first.
//
// The wire is JSON-RPC 2.0 with the base protocol's Content-Length framing
// from github.com/sourcegraph/jsonrpc2 (VSCodeObjectCodec); the messages
// are the LSP 3.17 structures of protocol_gen.go, generated from the
// specification's meta-model by internal/protogen (go generate, with
// LSP_META_MODEL naming the metaModel.json). Documents are synchronised
// whole.
//
// [Service.Check] is what Write, Edit, MultiEdit and NotebookEdit end
// their results with (a notebook's code cells as one document beside it,
// its diagnostics given per cell): the server is given the file's text before and after the change
// and the diagnostics it publishes for each version are compared; those
// present after and not before (matched by severity, message, source and
// code at the line the edit moved them to) are listed in Claude Code's
// <new-diagnostics> wrapper, errors first, at most 10, within 4,000
// characters. The wait is bounded (3 s once the server has published
// diagnostics, five times that while it loads the workspace) and the
// result says when it gave up. A file no server handles costs nothing.
//
// [Tool] is the LSP tool, with Claude Code's operations and 1-based
// positions; its answers are path:line:col lines with the line of code,
// excerpts only from files inside the working directories, results in
// files a Read deny rule covers left out.
package lsp

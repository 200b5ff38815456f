// Package server serves the tool pool over MCP, on stdio or streamable HTTP,
// with the go-sdk.
//
// It owns the mapping from MCP sessions to agent-mcp sessions
// (tools.Session): one per stdio process, one per HTTP session, closed (and
// their processes killed) when the MCP session ends; and, for protocol
// 2026-07-28 over HTTP, which has no sessions, one per bearer token
// (principal.go), closed when idle. Who sent an HTTP request travels in
// its context, put there by go-sdk's bearer-token middleware (the
// TokenInfo of guard.go's verify), never in a header. Every tools/call goes
// through the orchestrator's pipeline; this package only translates: MCP
// arguments in, the model-facing text out (plus structuredContent only with
// --structured-output: hosts show the model that JSON instead of the text
// when it is there), progress tokens to progress notifications, client cancellation to context
// cancellation, persisted results to resources. Stdio has its own
// transport (stdio.go): each line is read once and the JSON-RPC message
// built on it, a large tools/call's arguments held aside from the SDK's
// decoding (held.go); over HTTP the guard reads each POST body once and
// holds a large call's arguments aside the same way before the SDK's
// handler sees the body. So a large Write costs about twice its size in
// memory.
//
// tools/list describes each tool with annotations from its fixed facts and
// a _meta for hosts (hostmeta.go): Claude Code's anthropic/alwaysLoad on the
// core tools, anthropic/searchHint, and anthropic/maxResultSizeChars set to
// the tool's own result budget.
//
// It is not where tools, permissions or the pipeline are defined.
package server

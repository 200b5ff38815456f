// Package upstream connects the chat loop to upstream MCP servers.
//
// It reads server configs ([Load], [parseConfig]: the project's .mcp.json,
// the Claude Desktop shape, agent-mcp's user config and --mcp-config
// files, with ${VAR} and ${VAR:-default} expansion), connects to each
// server with the go-sdk client over stdio, streamable HTTP or SSE
// ([Start] returns a [Manager]), and adapts every upstream tool to a
// tools.Tool named mcp__<server>__<tool> ([ToolName]: at most 64
// characters of [A-Za-z0-9_-], unique) so it joins the pool and runs
// through the orchestrator's pipeline like a built-in. A tool's
// readOnlyHint makes it concurrency-safe.
//
// A server that fails to start is a warning and is left out; one that dies
// is marked stopped and restarted on its next call;
// notifications/tools/list_changed re-lists its tools and sets
// [Manager.Changed], which the agent checks before each model call to
// rebuild the pool. A server of protocol 2026-07-28 that offers the MCP
// Tasks extension may make a call a task (tasks.go): the call then
// detaches from its turn and is polled to its end, its status its
// progress, its questions put to the user. This package does not decide
// permissions: the
// pipeline's permitter does, from rules such as mcp__server__tool.
package upstream

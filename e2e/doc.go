// Package e2e holds the binary-level tests: each test builds the real
// agent-mcp binary once (internal/testbin) and drives it as a user or an MCP
// host would, over stdio, streamable HTTP or a pseudo-terminal.
package e2e

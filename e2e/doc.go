// Package e2e holds the binary-level tests: each test builds the real
// agent-mcp binary once (internal/testbin) and drives it as a user or an MCP
// host would, over stdio, streamable HTTP or a pseudo-terminal. The attack
// corpus is e2e/attacks, the real MCP hosts e2e/hosts; the sandbox
// environment they share is e2e/internal/sandboxenv.
package e2e

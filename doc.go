// Command agent-mcp serves the coding-agent tool suite (Read, Write, Edit,
// Grep, Bash, ...) over MCP, and runs a bundled agent loop over it.
//
//	agent-mcp serve                 MCP over stdio
//	agent-mcp serve --http          MCP over streamable HTTP
//	agent-mcp chat [-p PROMPT]      the bundled agent loop (Anthropic or OpenAI-compatible models)
//	agent-mcp tools [--json]        list the tool pool
//	agent-mcp trust DIR             let DIR's own settings widen permissions
//	agent-mcp sandbox check         what Bash's kernel sandbox can use here, and a self-test
//	agent-mcp version
//
// The subcommands are wired in internal/cli; main.go only connects them to
// the process: its signals, arguments, standard streams and exit code.
package main

// Package hosts runs real MCP hosts against the real agent-mcp binary and
// checks what the model receives: Claude Code (over stdio and over
// streamable HTTP with a bearer token), Codex CLI and Gemini CLI, each
// driven by a scripted fake of its model API (Anthropic Messages, OpenAI
// Responses, Gemini) that records the tool results the host sends back.
//
// The hosts come from npm with Node 22 (conformance/run-official.sh
// install puts them in .cache/node). The tests run when AGENT_MCP_HOSTS_DIR
// names that directory, as .ci/run sets it, and then a missing host fails
// them; without it they skip with a message saying how to run them.
package hosts

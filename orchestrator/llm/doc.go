// Package llm is the one conversation vocabulary of agent-mcp's agent loop:
// messages of content blocks (text, images, tool calls and their results),
// the tools offered to a model, one model call ([Request], [Response]) and
// the [Model] interface that answers it.
//
// Two kinds of Model exist: the provider clients of package providers
// (Anthropic Messages, OpenAI-compatible Chat Completions), used by chat and
// its sub-agents, and the MCP-sampling client of package server, through
// which an MCP client's own model drives the server's sub-agents. The agent
// loop (package agent) speaks only this vocabulary; each Model translates it
// to its wire format.
package llm

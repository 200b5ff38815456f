// Package agent is agent-mcp's bundled agent loop: the conversation with a
// model over the tool pool.
//
// An [Agent] sends the conversation and the pool's tools (with prompt-cache
// breakpoints after the built-ins and after the MCP tools) to a
// providers.Provider, streams the answer, and runs the tool calls through
// the orchestrator's streaming executor (orchestrator.Executor):
// concurrency-safe calls start as soon as the model has finished writing
// them, while the rest of the response still streams. The
// loop ends at the end of the model's turn or at MaxTurns.
//
// Also here: the system prompt ([SystemPrompt], [DetectEnv]: tools,
// environment, AGENTS.md / CLAUDE.md), context management (old tool
// results cleared first, then the oldest turns summarised), conversation
// persistence as JSON lines ([Store], [Conversation]) and the model for
// the Agent tool's sub-agents ([SubAgentModel], [NewSubAgentRunner]: a
// subagent.Runner driving chat's provider). The terminal front end lives
// in package term.
package agent

// Package agent is agent-mcp's one agent loop: the conversation with a model
// over the tool pool, run by chat and by the Agent tool's sub-agents alike.
//
// An [Agent] sends the conversation and the pool's tools (with prompt-cache
// breakpoints after the built-ins and after the MCP tools) to an llm.Model,
// streams the answer, and runs the tool calls through the orchestrator's
// streaming executor (orchestrator.Executor): concurrency-safe calls start
// as soon as the model has finished writing them, while the rest of the
// response still streams. The loop ends at the end of the model's turn or at
// MaxTurns. Old tool results are cleared, then the oldest turns summarised,
// when the conversation nears the model's context window.
//
// [SubAgents] runs sub-agents on the same loop: each gets its own
// conversation, a session of its own (started in the parent's directory and
// permission mode, closed when it ends, so its calls have their own
// concurrency gate), the subset of the pool it is offered and a turn limit.
// Chat gives it its provider's model; the MCP server gives it the client's
// model through sampling. Sub-agents cannot start sub-agents, ask the user
// or switch plan mode (tools with tools.Tool.ActsOnConversation); a read-only sub-agent's calls are
// refused unless they are read-only.
//
// Also here: the system prompt ([SystemPrompt], [DetectEnv]: tools,
// environment, AGENTS.md / CLAUDE.md), conversation persistence as JSON
// lines ([Store], [Conversation]) and [Sampler] (tools.Sampler on a model).
// The terminal front end lives in package internal/tui.
package agent

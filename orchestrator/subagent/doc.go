// Package subagent runs sub-agents for the Agent tool: a model loop with its
// own conversation, a subset of the tool pool and a turn limit, whose tool
// calls go through the same orchestrator pipeline as any other call.
//
// [Runner] implements tools.SubAgentRunner on top of a [Model], a language
// model that can use tools. The server provides a Model driving the MCP
// client's model through sampling with tools (sampling/createMessage with
// tools and toolChoice); chat can provide one driving its own provider.
//
// Each sub-agent gets a session of its own, started from the parent's
// directory and permission mode and closed when it ends, so its calls have
// their own concurrency gate: a parent Agent call holding a place in the
// parent's gate can never wait on its own sub-agent's exclusive calls.
// Sub-agents cannot start sub-agents, ask the user questions or switch plan
// mode ([DefaultExclude]); a read-only sub-agent's calls are refused unless
// they are read-only. Every other permission decision is the pipeline's.
//
// This package does not talk to a model provider and does not know MCP.
package subagent

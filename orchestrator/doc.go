// Package orchestrator is the one path every tool call takes, whoever makes
// it: the MCP server, the chat loop or a sub-agent.
//
// [AssemblePool] builds the tool pool (built-ins, then upstream MCP tools,
// filtered by rules and mode). [Pipeline] runs one call: find the tool by
// name or alias, validate the input against its schema, run PreToolUse
// hooks, decide permission, call the tool under the session's concurrency
// gate (safe calls overlap, others run alone), run PostToolUse hooks, render
// the result and keep it within budget (over-budget results are persisted
// and previewed). [Executor] schedules a model turn's calls through the
// pipeline while they stream in: consecutive concurrency-safe calls in
// parallel, the rest alone, outcomes in call order.
//
// The subpackages hold what sits around the pipeline: permit (the permission
// decision and asking), hooks (user command hooks), upstream (MCP servers
// whose tools join the pool), llm (the conversation vocabulary and the Model
// interface), providers (model APIs) and agent (the agent loop and chat's
// terminal front end).
package orchestrator

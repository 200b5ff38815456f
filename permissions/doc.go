// Package permissions decides whether a tool call may run.
//
// It holds the vocabulary every other package uses to talk about permission:
// the session's [Mode] (default, acceptEdits, plan, dontAsk,
// bypassPermissions) and the [Decision] a check returns (allow, ask, deny, or
// passthrough to the general rules). Rule parsing and matching, settings
// files, path confinement and shell command analysis live here too, so that
// the tools and the orchestrator share one implementation of each.
//
// This package depends on nothing else in agent-mcp: permissions ← tools ←
// orchestrator ← server/main.
package permissions

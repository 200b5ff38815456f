// Package settings reads agent-mcp's settings, once and in one place:
// Claude Code's and agent-mcp's user settings, the project's
// .claude/settings.json and .claude/settings.local.json, and --settings
// values, merged into one [Settings] (permission rules, default mode,
// additional directories, hooks, the Bash sandbox's settings and chat's
// model) by [Load], with the
// places injectable through [Locations].
//
// A project's own settings come with a cloned repository, so they may
// narrow permissions (deny and ask rules, the default or plan mode) but
// widen them only once the operator trusts the directory ([Trust],
// recorded in agent-mcp's configuration directory, or
// [Locations.TrustProject]); until then [Settings.Ignored] says what was
// left out.
//
// The files are shared with Claude Code, so keys agent-mcp does not read
// are no mistake; a key neither program knows is ([UnknownKeys], with the
// closest known key, in [Settings.Unknown]).
//
// What it is not: it does not decide anything; package permissions holds
// the rules and the policy, package orchestrator/permit the decision.
package settings

// Package permissions decides whether a tool call may run.
//
// It holds the vocabulary every other package uses to talk about permission:
// the session's [Mode] (default, acceptEdits, plan, dontAsk,
// bypassPermissions) and the [Decision] a check returns (allow, ask, deny, or
// passthrough to the general rules). Rule parsing and matching, settings
// files, path confinement and shell command analysis live here too, so that
// the tools and the orchestrator share one implementation of each.
//
// Main types: [Rule] and [ParseRule] (settings syntax), [RuleSet] of
// [SourcedRule]s matched against a call described as a [Target] (its
// paths as [Access]es, its Bash line as a [CommandLine] built from the
// shellcmd analysis, its URL, its input fields); [Settings] and [Load]
// (every settings source merged, locations injectable through
// [Locations]); [Confinement], [ResolvePath] and [OpenFile] (working
// directories checked component by component after resolving symlinks,
// and opened through os.Root so the check and the open cannot be raced
// apart); [Protected] paths and [ProtectedPaths] (the one list, which the
// Bash sandbox reads too); [DecidePolicy] (the session's starting mode and
// whether the host's confirmation is trusted); [Trust] and [Trusted]
// (workspaces whose own settings may widen permissions);
// [CommandLine.Accesses] (the paths a Bash line touches, resolved where it
// will run). Package orchestrator/permit combines them into the decision
// for a call.
//
// This package depends on nothing else in agent-mcp: permissions ← tools ←
// orchestrator ← server/main.
package permissions

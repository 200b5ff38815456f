// Package permissions decides whether a tool call may run.
//
// It holds the vocabulary every other package uses to talk about permission:
// the session's [Mode] (default, acceptEdits, plan, dontAsk,
// bypassPermissions) and the [Decision] a check returns (allow, ask, deny, or
// passthrough to the general rules), and the rules and decisions built on
// it. Its concerns are split:
//
//   - this package: rules and decisions. [Rule] and [ParseRule] (settings
//     syntax), [RuleSet] of [SourcedRule]s matched against a call described
//     as a [Target] (its paths as [Access]es, its Bash line as a
//     [CommandLine] built from the shellcmd analysis, with
//     [CommandLine.Accesses] resolving the paths it touches where it will
//     run, its URL, its input fields); [DecidePolicy] (the session's
//     starting mode and whether the host's confirmation is trusted, in one
//     function); [Protected] paths and [ProtectedPaths] (the one list of
//     what a write may not change without a rule naming it, which the Bash
//     sandbox makes read-only too); [Credentials] (the one list of
//     credential paths, refused to reads without a rule naming them, which
//     the sandbox masks); [SandboxReadOnlyPaths] (the parts of .git that
//     make git run code, kept read-only by the sandbox).
//   - package permissions/confine: confinement and confined opening
//     (working directories checked component by component after resolving
//     symlinks, each path resolved once and handed to the tool, and files
//     opened openat-style so the check and the open cannot be raced apart).
//   - package permissions/settings: the settings files, read once in one
//     place (rules, mode, directories, hooks, chat's model), and workspace
//     trust (a project's own settings widen permissions only once trusted).
//   - package permissions/shellcmd: the one analysis of a shell line.
//
// Package orchestrator/permit combines them into the decision for a call.
//
// This package depends on nothing else in agent-mcp but its own
// permissions/confine and permissions/shellcmd (deps_test.go holds every
// package to its imports).
package permissions

// Package hooks is agent-mcp's orchestrator.Hooks: it runs the command
// hooks of the settings' PreToolUse and PostToolUse lists around every
// tool call, with Claude Code's JSON contract (docs/tools.md §10).
//
// Each hook whose matcher selects the tool runs as `sh -c COMMAND` in the
// session's current directory, in its own process group, with the event
// as JSON on stdin (session_id, cwd, permission_mode, hook_event_name,
// tool_name, tool_input, and tool_response after the call) and
// CLAUDE_PROJECT_DIR in its environment. Hooks of one event run in
// parallel; their outcomes combine in settings order.
//
//   - Exit 0: stdout may be a JSON object whose hookSpecificOutput gives
//     permissionDecision (allow, deny or ask) with
//     permissionDecisionReason, updatedInput, and additionalContext. The
//     older top-level decision "approve"/"block" with reason is read too.
//   - Exit 2: the call is blocked (PreToolUse) or the model is told
//     (PostToolUse), with the hook's stderr as the reason.
//   - Any other exit, a timeout, or a failure to start: a non-blocking
//     error, logged; the call goes on.
//
// A hook's allow skips asking the user but never overrides a deny or ask
// rule; package permit enforces that.
package hooks

// Package shell holds the shell tools: Bash, which runs a command line,
// and TaskOutput and TaskStop, which follow and end the background tasks
// Bash leaves running (docs/tools.md §7).
//
// Every command is a [Task] of the session's task [Manager] (kept in the
// session's slot): `bash -c` in its own process group, stdin /dev/null,
// stdout and stderr merged into one stream that a copier writes to the
// task's output file in the session's state directory (up to a cap) while
// keeping only a small tail in memory. A foreground call waits for the
// shell, sends progress with the latest output line, and on its timeout
// either hands the still-running task to the background (default) or
// stops it. Background tasks (`run_in_background`) write to a
// pseudo-terminal instead of a pipe, so programs line-buffer.
//
// Nothing outlives its session: TaskStop, a cancelled call, a timeout
// with backgrounding turned off and the session's end (the Manager's
// Close, called by Session.Close, which the server calls for every session
// when it exits) send SIGTERM to the whole group, then SIGKILL after a
// grace period. A marker variable (AGENT_MCP_TASK) in every command's
// environment tells a task's processes apart once the shell itself has
// been reaped and its group id could be reused.
//
// With a sandbox (package sandbox, built from --sandbox and the settings),
// every command, foreground or background, is started through its launcher,
// so the kernel holds what it may write, read and reach; a command the
// settings exclude runs outside it.
//
// Whether a call is read-only (and may run beside others) comes from
// permissions/shellcmd, the same analysis the permission rules use.
package shell

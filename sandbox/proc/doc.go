// Package proc is what every process agent-mcp starts shares, whether or
// not it is confined: a process group of its own (a new process group on
// Windows), a way to signal and end that whole group (taskkill /T on
// Windows, where there are no signals), the allow-list of the variables a
// command gets from the server's environment ([CommandEnv], [Allowed]), and
// the list of agent-mcp's own secret variables that no child gets
// ([SecretEnv]).
//
// Bash commands and background tasks (tools/shell), language servers
// (tools/lsp), hooks (orchestrator/hooks) and upstream MCP servers
// (orchestrator/upstream) all start their processes through it, so the
// group and environment rules are written once.
package proc

// Package cli is agent-mcp's command line: Run parses the arguments and
// runs one subcommand, returning the process exit code.
//
//   - serve (serve.go): the MCP server on stdio, or streamable HTTP with --http
//   - chat (chat.go): the bundled agent, in the terminal or once with -p
//   - tools (serve.go): the tool pool as a table, or tools/list's JSON
//   - trust (trust.go): record a directory whose own settings may widen permissions
//   - sandbox check (sandbox.go): what Bash's kernel sandbox can use here, and a self-test
//   - doctor (doctor.go): the settings' unknown keys, the sandbox, each host's
//     config file and chat's upstream MCP servers, checked
//   - version (also --version)
//
// A mistyped command or flag gets a few lines naming it, the closest one
// and where the list is, never the whole usage.
//
// The flags that build a session (working directories, settings, permission
// rules and mode, the sandbox, limits) are shared by serve, chat, tools and
// sandbox check (permsetup.go, webflags.go). Run also dispatches the hidden
// launcher that Bash's sandbox re-executes the binary as.
package cli

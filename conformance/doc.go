// Package conformance checks agent-mcp against the MCP protocol from the
// outside, as a client sees it.
//
// It holds three suites:
//
//   - Golden JSON-RPC transcripts (testdata/*.txtar), replayed by
//     conformance_test.go against the real binary over stdio. Each file
//     seeds a workspace, sends client requests and compares the server's
//     responses; `go test ./conformance -run TestTranscripts -update`
//     rewrites the expected responses.
//   - The server's behaviour under faults over HTTP (faults_test.go): the
//     token printed once, unsafe flags refused, a client's disconnect
//     killing its calls' processes, SIGTERM's grace period, SIGKILL during
//     writes never tearing a file.
//   - A runner for real clients (run-official.sh, called by .ci/run after
//     the Go tests): the official suite @modelcontextprotocol/conformance
//     against `agent-mcp serve --http` with baseline-binary.yml (the
//     fixture scenarios it cannot pass, each with its reason) and against
//     cmd/fixture-server, a test build that mounts the suite's fixture
//     tools, resources and prompts on the same server code, with no
//     baseline; then the MCP Inspector CLI and Claude Code over stdio and
//     HTTP.
//
// The transcript format is a txtar archive:
//
//	<free comment: what this transcript shows>
//	-- args --            optional: extra `agent-mcp serve` flags, one line
//	-- env --             optional: KEY=VALUE lines added to the environment
//	-- initialize --      optional: the params of the runner's initialize
//	-- workspace/<path> -- files created in the working directory first
//	-- client --          JSON-RPC messages, one per line
//	-- record --          optional: server notification or request methods
//	                      to record in the server section, one per line
//	-- reply/<method> --  optional: the result sent back when the server
//	                      asks the client <method> (default: an error)
//	-- scrub --           optional: regexps (`RE` or `RE => REPLACEMENT`)
//	                      applied to every server message before comparison
//	-- server --          expected messages, pretty JSON, normalised
//	-- want/<path> --     optional: expected workspace file content after
//
// The runner performs initialize / notifications/initialized itself unless
// the client section contains an initialize request, in which case every
// line is sent verbatim (to test calls before initialize, for instance).
// A client line with an id waits for the response with that id; a line
// without one (a notification) waits for nothing; a line that is not a
// JSON object with a method (malformed input) waits for the next response
// of any id, or records that the server closed the stream.
package conformance

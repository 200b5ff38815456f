// Command load drives agent-mcp with concurrent HTTP sessions of mixed
// tool calls and reports throughput, latency and the server's memory, and
// measures startup (process start to the initialize response over stdio)
// against the floor, a hello-world Go binary's start to its exit, and
// beside the reference filesystem server and Claude Code's `claude mcp
// serve` where conformance/run-official.sh has installed them: each one's
// median wall time, and the CPU time it took from its start to its exit,
// which a loaded machine disturbs far less, each with its ratio to the
// floor's (the medians' ratio, and the median of the run-by-run ratios).
//
//	go run ./bench/load                      # 50 sessions × 200 calls
//	go run ./bench/load -sessions 10 -calls 50
//	go run ./bench/load -startup 20          # startup only, 20 runs each
//	go run ./bench/load -startup 20 -baseline /tmp/agent-mcp-before   # and an earlier build, in the same run
//
// Each session calls, in rotation, Read, Grep, Glob, Bash `echo` and Write
// (to files of its own, each rewritten several times); every answer is
// checked, and every written file is compared with the last content the
// session wrote. Any error fails the run.
package main

// Command searchbench measures agent-mcp's Grep and Glob tools against
// ripgrep and fd, side by side in one run.
//
// It starts the built agent-mcp binary (`agent-mcp serve`, stdio), talks to
// it through a real go-sdk MCP client, and for every row times the tool
// call and the equivalent rg / fdfind command on the same tree, on a warm
// cache (one warm-up run, then the median of -runs runs). It prints a table
// with the ratio ours / theirs, and the server's peak resident memory.
//
//	go build -o /tmp/agent-mcp . && go run ./bench/searchbench -bin /tmp/agent-mcp -tree "$(go env GOROOT)/src"
//
// -gen N writes a synthetic tree of N files first (see genTree). bench/search.sh
// runs the whole suite.
//
// -relay turns it into bench/scale.py's go-sdk client: it starts `agent-mcp
// serve --cwd TREE` under a go-sdk client, reads tool calls from stdin (one
// JSON object {"name", "arguments"} a line) and writes each result with the
// time CallTool took (relay.go).
package main

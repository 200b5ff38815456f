// Command sandboxbench measures what Bash's kernel sandbox costs per
// command: the median round trip of a Bash `echo` call through a real MCP
// client, with the sandbox off and with each set of layers, side by side in
// one run (the calls alternate between the servers, so load on the machine
// falls on all of them alike).
//
//	go build -o /tmp/agent-mcp . && go run ./bench/sandboxbench -bin /tmp/agent-mcp -runs 200
package main

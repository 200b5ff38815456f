// Command sandboxbench measures what Bash's kernel sandbox costs per
// command: the median round trip of a Bash `echo` call through a real MCP
// client, with the sandbox off and with each set of layers, side by side in
// one run (the calls alternate between the servers, in a new order each
// round, so load on the machine falls on all of them alike). -base measures
// another binary beside it, call for call; -command measures another
// command line (e.g. a go build), -only some configurations.
//
//	go build -o /tmp/agent-mcp . && go run ./bench/sandboxbench -bin /tmp/agent-mcp -runs 200
package main

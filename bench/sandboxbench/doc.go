// Command sandboxbench measures what Bash's kernel sandbox costs per
// command: the median round trip of a Bash `echo` call through a real MCP
// client, with the sandbox off and with each set of layers, side by side in
// one run (the calls alternate between the servers, in a new order each
// round, so load on the machine falls on all of them alike). Beside them,
// in the same rounds, it times the sandbox's floor: `bash -c COMMAND`
// alone and inside bubblewrap making every namespace (`bwrap
// --unshare-all`), and it reports what each configuration adds to the
// unsandboxed call as a multiple of what bubblewrap adds to the bare
// shell. -burn runs CPU burners beside it, for a loaded machine; -base
// measures another binary beside it, call for call; -command measures
// another command line (e.g. a go build), -only some configurations.
//
//	CGO_ENABLED=0 go build -o /tmp/agent-mcp . && go run ./bench/sandboxbench -bin /tmp/agent-mcp -runs 200 -command true -burn 2
package main

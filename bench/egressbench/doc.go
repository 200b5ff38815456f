// Command egressbench measures what the sandbox's egress proxy costs a
// command, against the same command with the network unrestricted, side
// by side in one run: the throughput of a large download from an HTTP
// server on loopback (curl -o /dev/null, its speed_download) and the time
// to the first byte of a small response, per new connection (curl's
// time_starttransfer). Through the proxy it measures both ways a client
// uses it: an absolute-form request (HTTP_PROXY for http://) and a
// CONNECT tunnel (what HTTPS uses; curl --proxytunnel).
//
//	go build -o /tmp/agent-mcp . && go run ./bench/egressbench -bin /tmp/agent-mcp
//
// It needs curl and a machine where the sandbox's namespaces layer works.
package main

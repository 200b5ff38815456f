// Command fixture-server is a test build of agent-mcp for the official
// MCP conformance suite (@modelcontextprotocol/conformance). It is the
// production server code — server.New with the built-in tool pool, served
// by server.ListenHTTP with the same Host/Origin/token guard — with the
// suite's fixture tools, resources, prompts and completion handler mounted
// on top. The production binary never carries these fixtures.
//
//	fixture-server [--addr 127.0.0.1:0] [--no-auth | --token T] [--cwd DIR]
//
// It prints "listening on URL" on stderr once it accepts connections.
package main

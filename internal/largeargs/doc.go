// Package largeargs keeps the large parts of a tool call's JSON arguments
// (a Write's content, an Edit's strings) from being copied more than they
// must be on their way from the transport to the tool.
//
// It owns the three steps that touch them, with one placeholder scheme:
//
//   - Scanning JSON text without decoding it (scan.go): where a string or
//     value ends, an object's members, a string's length in characters,
//     and a string's decoded text in one allocation.
//   - Long strings out of a decode (strings.go): TakeStrings replaces each
//     string over a length by a placeholder and keeps its JSON text, so
//     the decode that follows (the tool's input in package tools, the
//     schema check in package orchestrator) builds no copy of it; the
//     caller puts the text back, decoded once, or checks it on its JSON
//     text.
//   - Holding a large tools/call's arguments aside from the MCP SDK
//     (hold.go): the transport that read a message (stdio's line, the
//     HTTP guard's body) hands the SDK the call with empty arguments and
//     a placeholder in _meta, and the server's middleware takes them back
//     from the Store before anything else reads the call.
//
// A placeholder is a short JSON string "agent-mcp large <128 random bits
// in hex> <n>": nothing to escape, and no input can spell one, since the
// random part is made afresh for each set of strings taken and for each
// arguments held.
//
// It imports nothing of agent-mcp: the tools, the pipeline and the server
// all build on it.
package largeargs

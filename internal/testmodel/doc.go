// Package testmodel holds test doubles for the chat loop: a scripted model
// server that speaks both the Anthropic Messages and the OpenAI Chat
// Completions streaming formats, and an upstream MCP server written with
// the go-sdk, served over stdio (by re-running the test binary) or HTTP.
//
// The model server replays a scenario: one [Reply] per model request, in
// order, each a list of parts (text, tool calls, and waits that hold the
// stream open until the test says so). It records every request so tests
// can assert on exactly what the client sent.
package testmodel

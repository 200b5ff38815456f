// Package testbin supports end-to-end tests that run the real agent-mcp
// binary: it builds the binary for each test process (linked once per
// checkout and shared, see [Build]), starts it with an environment that
// never reads the real user's settings, and connects go-sdk clients to it
// over stdio or streamable HTTP.
//
// It is for tests only; nothing in the product imports it.
package testbin

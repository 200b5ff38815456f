// Package testbin supports end-to-end tests that run the real agent-mcp
// binary: it builds the binary for each test process (linked once per
// checkout and shared, see [Build]), starts it with an environment that
// never reads the real user's settings, and connects go-sdk clients to it
// over stdio or streamable HTTP.
//
// It also holds what tests of every package share for waiting on a real
// process or server (wait.go): [WaitFor] polls a condition on state until
// it holds, bounded by the test's own context and the test binary's
// deadline ([WaitContext]) rather than a fixed time, and [FreeAddr] and
// [FreePort] pick a loopback port for a server the test starts.
//
// It is for tests only; nothing in the product imports it.
package testbin

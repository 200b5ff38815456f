// Package tooltest runs tools in tests the way agent-mcp runs them, in the
// spirit of net/http/httptest: a real session in temporary directories, and
// every call through the orchestrator's pipeline — schema validation, the
// tool's own validation, the permission decision, the call, rendering and
// the result budget — so a test exercises what a client would get.
//
// [NewSession] makes a session; [New] makes an [Env], a pipeline over some
// tools and a session; [Call] runs one call of one tool in a given session.
// The permission step is, unless a test chooses a Permitter (such as
// permit.New with the rules under test), the pipeline's own with no rules
// (orchestrator.AllowUnlessDenied): what the tool or a hook denies or asks
// about is refused, the rest runs, so a test sees the tool's own checks.
package tooltest

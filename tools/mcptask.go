package tools

import "context"

type mcpTaskKey struct{}

// WithMCPTask marks ctx as the context of a tools/call that the server
// may answer with an MCP task (the Tasks extension): the client polls for
// the result, so a tool need not hand long work to the background at its
// usual timeout; it runs on until it ends, is cancelled, or the task's
// TTL passes.
func WithMCPTask(ctx context.Context) context.Context {
	return context.WithValue(ctx, mcpTaskKey{}, true)
}

// InMCPTask reports whether ctx is the context of a call that may be
// answered with an MCP task (see WithMCPTask).
func InMCPTask(ctx context.Context) bool {
	v, _ := ctx.Value(mcpTaskKey{}).(bool)
	return v
}

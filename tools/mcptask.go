package tools

import (
	"context"
	"time"
)

type mcpTaskKey struct{}

// WithMCPTask marks ctx as the context of a tools/call that the server
// answers with an MCP task (the Tasks extension) once it has run for
// inline: the client then polls for the result, so a tool need not hand
// long work to the background at its usual timeout; it runs on until it
// ends, is cancelled, or the task's TTL passes.
func WithMCPTask(ctx context.Context, inline time.Duration) context.Context {
	return context.WithValue(ctx, mcpTaskKey{}, inline)
}

// MCPTaskInline reports whether ctx is the context of a call that becomes
// an MCP task after it has run for inline (see WithMCPTask).
func MCPTaskInline(ctx context.Context) (inline time.Duration, ok bool) {
	inline, ok = ctx.Value(mcpTaskKey{}).(time.Duration)
	return inline, ok
}

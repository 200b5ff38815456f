package orchestrator

import (
	"context"

	"github.com/agent-mcp/agent-mcp/tools"
)

// RunDeferred runs one call through the pipeline like [Pipeline.Run] but
// does not apply the result's context modifier: a caller that schedules
// calls itself (the chat loop's streaming executor) applies modifiers with
// [ApplyModifier] in call order, right after a serial call and after the
// whole batch for parallel calls, as [Pipeline.RunCalls] does.
func (p *Pipeline) RunDeferred(ctx context.Context, uc *tools.UseContext, call Call, progress tools.Progress) Outcome {
	return p.runPipeline(ctx, withCallID(uc, call.ID), call, progress)
}

// ApplyModifier applies out's context modifier, if any, to uc's session.
func ApplyModifier(uc *tools.UseContext, out Outcome) { applyModifier(uc, out) }

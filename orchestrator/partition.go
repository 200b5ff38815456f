package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agent-mcp/agent-mcp/tools"
)

// batch is a run of calls executed together: several concurrency-safe
// calls in parallel, or a single call alone.
type batch struct {
	parallel bool
	indices  []int
}

// partitionToolCalls groups consecutive concurrency-safe calls into parallel
// batches and puts every other call in a batch of its own, keeping order.
func (p *Pipeline) partitionToolCalls(calls []Call) []batch {
	var out []batch
	for i, c := range calls {
		safe := p.IsConcurrencySafe(c)
		if safe && len(out) > 0 && out[len(out)-1].parallel {
			out[len(out)-1].indices = append(out[len(out)-1].indices, i)
			continue
		}
		out = append(out, batch{parallel: safe, indices: []int{i}})
	}
	return out
}

// errSiblingFailed is the cancellation cause given to the siblings of a call
// whose failure aborts its batch.
var errSiblingFailed = errors.New("a call running beside it failed")

// CallProgress receives progress for the call at index i of a RunCalls list.
type CallProgress func(i int, u tools.ProgressUpdate)

// RunCalls runs calls the way a model's tool-use turn is run: batches from
// partitionToolCalls in order; the calls of a parallel batch at the same
// time (at most MaxParallel at once), each other call alone. A serial call's
// context modifier applies before the next call starts; a parallel batch's
// modifiers apply in call order once the batch is done. When a call of a
// tool that aborts its siblings (Bash) fails, the rest of its batch is
// cancelled. Outcomes come back in the order of calls.
func (p *Pipeline) RunCalls(ctx context.Context, uc *tools.UseContext, calls []Call, progress CallProgress) []Outcome {
	outs := make([]Outcome, len(calls))
	prog := func(i int) tools.Progress {
		if progress == nil {
			return nil
		}
		return func(u tools.ProgressUpdate) { progress(i, u) }
	}
	for _, b := range p.partitionToolCalls(calls) {
		if !b.parallel {
			i := b.indices[0]
			outs[i] = p.runPipeline(ctx, withCallID(uc, calls[i].ID), calls[i], prog(i))
			applyModifier(uc, outs[i])
			continue
		}
		bctx, cancel := context.WithCancelCause(ctx)
		limit := p.MaxParallel
		if limit <= 0 {
			limit = DefaultMaxParallel
		}
		sem := make(chan struct{}, limit)
		var wg sync.WaitGroup
		for _, i := range b.indices {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				o := p.runPipeline(bctx, withCallID(uc, calls[i].ID), calls[i], prog(i))
				if o.Tool != nil && o.Tool.AbortsSiblingsOnError() && o.Result != nil && o.Result.IsError && bctx.Err() == nil {
					cancel(fmt.Errorf("%w (%s)", errSiblingFailed, o.Call.Name))
				}
				outs[i] = o
			}()
		}
		wg.Wait()
		cancel(nil)
		for _, i := range b.indices {
			applyModifier(uc, outs[i])
		}
	}
	return outs
}

func withCallID(uc *tools.UseContext, id string) *tools.UseContext {
	c := *uc
	c.CallID = id
	return &c
}

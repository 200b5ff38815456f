package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// errSiblingFailed cancels the rest of a parallel batch when a call of a
// tool that aborts its siblings (Bash) fails.
var errSiblingFailed = errors.New("a call running beside it failed")

// executor runs a response's tool calls while the response is still
// streaming, with the same semantics as orchestrator.Pipeline.RunCalls:
// consecutive concurrency-safe calls form a parallel batch, any other call
// runs alone and in order; a serial call's context modifier applies right
// after it, a batch's modifiers apply in call order once the batch is
// complete; a failing call of a sibling-aborting tool cancels the rest of
// its batch. The difference is timing: a safe call starts as soon as the
// model has finished writing it, while later calls are still streaming.
type executor struct {
	p   *orchestrator.Pipeline
	uc  *tools.UseContext
	ctx context.Context
	ev  Events

	mu      sync.Mutex
	calls   []*pending
	batches []*batch
	applied int  // batches whose modifiers were applied
	closed  bool // the response finished: no more calls
	wg      sync.WaitGroup
}

type pending struct {
	call    orchestrator.Call
	safe    bool
	batch   *batch
	started bool
	done    bool
	out     orchestrator.Outcome
}

type batch struct {
	parallel bool
	members  []*pending
	ctx      context.Context
	cancel   context.CancelCauseFunc
}

func newExecutor(ctx context.Context, p *orchestrator.Pipeline, uc *tools.UseContext, ev Events) *executor {
	return &executor{p: p, uc: uc, ctx: ctx, ev: ev}
}

// add queues a call the model has finished writing and starts whatever
// may start.
func (e *executor) add(call orchestrator.Call) {
	safe := e.p.IsConcurrencySafe(call)
	e.mu.Lock()
	defer e.mu.Unlock()
	pc := &pending{call: call, safe: safe}
	var last *batch
	if n := len(e.batches); n > 0 {
		last = e.batches[n-1]
	}
	if safe && last != nil && last.parallel {
		last.members = append(last.members, pc)
		pc.batch = last
	} else {
		b := &batch{parallel: safe, members: []*pending{pc}}
		b.ctx, b.cancel = context.WithCancelCause(e.ctx)
		e.batches = append(e.batches, b)
		pc.batch = b
	}
	e.calls = append(e.calls, pc)
	e.scheduleLocked()
}

// scheduleLocked applies the modifiers of finished batches and starts the
// calls whose turn has come. A safe call starts when every call before it
// has finished or is a running safe call of its batch; any other call
// starts when every call before it has finished.
func (e *executor) scheduleLocked() {
	e.applyLocked()
	for _, pc := range e.calls {
		if pc.done {
			continue
		}
		if pc.started {
			if !pc.safe {
				return
			}
			continue
		}
		if e.ctx.Err() != nil {
			pc.started, pc.done = true, true
			pc.out = orchestrator.Outcome{Call: pc.call, Result: tools.ErrorResult(
				fmt.Sprintf("%s was not run: the turn was interrupted before it started.", pc.call.Name))}
			continue
		}
		if !pc.safe {
			if !e.allBeforeDone(pc) || e.applied < e.batchIndex(pc.batch) {
				return
			}
			e.start(pc)
			return
		}
		if !e.allBeforeDoneOrSameBatch(pc) {
			return
		}
		e.start(pc)
	}
}

func (e *executor) allBeforeDone(pc *pending) bool {
	for _, o := range e.calls {
		if o == pc {
			return true
		}
		if !o.done {
			return false
		}
	}
	return true
}

func (e *executor) allBeforeDoneOrSameBatch(pc *pending) bool {
	for _, o := range e.calls {
		if o == pc {
			return true
		}
		if !o.done && o.batch != pc.batch {
			return false
		}
	}
	return true
}

func (e *executor) batchIndex(b *batch) int {
	for i, o := range e.batches {
		if o == b {
			return i
		}
	}
	return len(e.batches)
}

// applyLocked applies, in order, the modifiers of batches that are
// complete: every member done and nothing more can join (a later batch
// exists or the response finished).
func (e *executor) applyLocked() {
	for e.applied < len(e.batches) {
		b := e.batches[e.applied]
		complete := e.applied < len(e.batches)-1 || e.closed || !b.parallel
		for _, m := range b.members {
			if !m.done {
				complete = false
			}
		}
		if !complete {
			return
		}
		for _, m := range b.members {
			orchestrator.ApplyModifier(e.uc, m.out)
		}
		b.cancel(nil)
		e.applied++
	}
}

func (e *executor) start(pc *pending) {
	pc.started = true
	e.wg.Add(1)
	if e.ev.ToolStart != nil {
		e.ev.ToolStart(pc.call)
	}
	var progress tools.Progress
	if e.ev.ToolProgress != nil {
		id := pc.call.ID
		progress = func(u tools.ProgressUpdate) { e.ev.ToolProgress(id, u) }
	}
	go func() {
		defer e.wg.Done()
		b := pc.batch
		out := e.p.RunDeferred(b.ctx, e.uc, pc.call, progress)
		if out.Tool != nil && out.Tool.AbortsSiblingsOnError() && out.Result != nil && out.Result.IsError && b.ctx.Err() == nil && b.parallel {
			b.cancel(fmt.Errorf("%w (%s)", errSiblingFailed, pc.call.Name))
		}
		if e.ev.ToolEnd != nil {
			e.ev.ToolEnd(out)
		}
		e.mu.Lock()
		pc.out, pc.done = out, true
		e.scheduleLocked()
		e.mu.Unlock()
	}()
}

// finish marks the response complete, waits for every call and returns
// the outcomes in call order.
func (e *executor) finish() []orchestrator.Outcome {
	e.mu.Lock()
	e.closed = true
	e.scheduleLocked()
	e.mu.Unlock()
	for {
		e.wg.Wait()
		e.mu.Lock()
		all := true
		for _, pc := range e.calls {
			if !pc.done {
				all = false
			}
		}
		if all {
			e.scheduleLocked() // apply the last batch's modifiers
			outs := make([]orchestrator.Outcome, len(e.calls))
			for i, pc := range e.calls {
				outs[i] = pc.out
			}
			e.mu.Unlock()
			return outs
		}
		// A call finished and started the next one after Wait returned
		// (or the context ended); wait again.
		e.scheduleLocked()
		e.mu.Unlock()
	}
}

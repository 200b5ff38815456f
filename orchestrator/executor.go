package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agent-mcp/agent-mcp/tools"
)

// errSiblingFailed is the cancellation cause given to the siblings of a call
// whose failure aborts its batch.
var errSiblingFailed = errors.New("a call running beside it failed")

// CallEvents receive what happens to the calls of an [Executor]; every field
// is optional. They may be called from several goroutines at once (the
// calls of a parallel batch).
type CallEvents struct {
	// Start is called when a call starts running.
	Start func(call Call)
	// Progress receives a running call's progress.
	Progress func(callID string, u tools.ProgressUpdate)
	// End is called with the outcome of each call that started.
	End func(out Outcome)
}

// Executor runs one model turn's tool calls through the pipeline while the
// calls are still arriving (the model is streaming its response):
//
//   - consecutive concurrency-safe calls form a parallel batch and run at
//     the same time, at most MaxParallel at once; any other call runs alone,
//     after every call before it has finished;
//   - a safe call starts as soon as it is added, when everything before it
//     has finished or belongs to its own batch;
//   - a serial call's context modifier applies right after it; a batch's
//     modifiers apply in call order once the batch is complete (every member
//     done and a later call added, or the turn finished);
//   - when a call of a tool that aborts its siblings (Bash) fails, the rest
//     of its batch is cancelled;
//   - once the context ends, calls not yet started are not run: they get an
//     error result saying so;
//   - a call that detaches (tools.UseContext.Detach: an upstream MCP server
//     made it a task) is scheduled around as if it were done: the calls
//     after it start while it runs on, and Wait still waits for it.
//
// [Executor.Wait] returns the outcomes in the order the calls were added.
// The chat loop, sub-agents and [Pipeline.RunCalls] all schedule through it.
type Executor struct {
	p     *Pipeline
	uc    *tools.UseContext
	ctx   context.Context
	ev    CallEvents
	limit int

	mu      sync.Mutex
	calls   []*pending
	batches []*batch
	applied int  // batches whose modifiers were applied
	running int  // calls started and not done
	closed  bool // Wait was called: no more calls
	wg      sync.WaitGroup
}

type pending struct {
	call Call
	safe bool
	// dec is the call's input, decoded once when it was added.
	dec     *decoded
	batch   *batch
	started bool
	done    bool
	// detached: the call goes on by itself (tools.UseContext.Detach);
	// the calls after it are scheduled as if it were done.
	detached bool
	out      Outcome
}

// batch is a run of calls scheduled together: several concurrency-safe calls
// in parallel, or a single call alone.
type batch struct {
	parallel bool
	members  []*pending
	ctx      context.Context
	cancel   context.CancelCauseFunc
}

// NewExecutor returns an executor that runs calls with uc (each call gets its
// own copy carrying its id) under ctx, reporting to ev.
func (p *Pipeline) NewExecutor(ctx context.Context, uc *tools.UseContext, ev CallEvents) *Executor {
	limit := p.MaxParallel
	if limit <= 0 {
		limit = DefaultMaxParallel
	}
	return &Executor{p: p, uc: uc, ctx: ctx, ev: ev, limit: limit}
}

// RunCalls runs calls the way a model's tool-use turn is run (see
// [Executor]), all known at once, and returns their outcomes in order.
func (p *Pipeline) RunCalls(ctx context.Context, uc *tools.UseContext, calls []Call, ev CallEvents) []Outcome {
	e := p.NewExecutor(ctx, uc, ev)
	for _, c := range calls {
		e.Add(c)
	}
	return e.Wait()
}

// Add queues a call the model has finished writing and starts whatever may
// start. It must not be called after Wait.
func (e *Executor) Add(call Call) {
	dec := e.p.decodeCall(call)
	safe := dec.safe
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		panic("orchestrator: Executor.Add after Wait")
	}
	pc := &pending{call: call, safe: safe, dec: dec}
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
// calls whose turn has come.
func (e *Executor) scheduleLocked() {
	e.applyLocked()
	for _, pc := range e.calls {
		if pc.done {
			continue
		}
		if pc.started {
			if !pc.safe && !pc.detached {
				return
			}
			continue
		}
		if e.ctx.Err() != nil {
			pc.started, pc.done = true, true
			pc.out = Outcome{Call: pc.call, Result: tools.ErrorResult(
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
		if !e.allBeforeDoneOrSameBatch(pc) || e.running >= e.limit {
			return
		}
		e.start(pc)
	}
}

func (e *Executor) allBeforeDone(pc *pending) bool {
	for _, o := range e.calls {
		if o == pc {
			return true
		}
		if !o.done && !o.detached {
			return false
		}
	}
	return true
}

func (e *Executor) allBeforeDoneOrSameBatch(pc *pending) bool {
	for _, o := range e.calls {
		if o == pc {
			return true
		}
		if !o.done && !o.detached && o.batch != pc.batch {
			return false
		}
	}
	return true
}

func (e *Executor) batchIndex(b *batch) int {
	for i, o := range e.batches {
		if o == b {
			return i
		}
	}
	return len(e.batches)
}

// applyLocked applies, in order, the modifiers of batches that are complete:
// every member done and nothing more can join (a later batch exists, the
// turn finished, or the batch is a serial one).
func (e *Executor) applyLocked() {
	for e.applied < len(e.batches) {
		b := e.batches[e.applied]
		complete := e.applied < len(e.batches)-1 || e.closed || !b.parallel
		allDone := true
		for _, m := range b.members {
			if !m.done {
				allDone = false
				if !m.detached {
					complete = false
				}
			}
		}
		if !complete {
			return
		}
		for _, m := range b.members {
			if m.done {
				applyModifier(e.uc, m.out)
			}
		}
		if allDone {
			// A detached member still runs under the batch's context: it
			// is released when that member ends (start).
			b.cancel(nil)
		}
		e.applied++
	}
}

func (e *Executor) start(pc *pending) {
	pc.started = true
	e.running++
	e.wg.Add(1)
	if e.ev.Start != nil {
		e.ev.Start(pc.call)
	}
	var progress tools.Progress
	if e.ev.Progress != nil {
		id := pc.call.ID
		progress = func(u tools.ProgressUpdate) { e.ev.Progress(id, u) }
	}
	uc := withCallID(e.uc, pc.call.ID)
	uc.Detach = func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if !pc.detached && !pc.done {
			pc.detached = true
			e.scheduleLocked()
		}
	}
	go func() {
		defer e.wg.Done()
		b := pc.batch
		out := e.p.runPipeline(b.ctx, uc, pc.call, progress, pc.dec)
		if b.parallel && out.Tool != nil && out.Tool.AbortsSiblingsOnError && out.Result != nil && out.Result.IsError && b.ctx.Err() == nil {
			b.cancel(fmt.Errorf("%w (%s)", errSiblingFailed, pc.call.Name))
		}
		if e.ev.End != nil {
			e.ev.End(out)
		}
		e.mu.Lock()
		pc.out, pc.done = out, true
		e.running--
		if pc.detached && e.batchIndex(b) < e.applied && allDone(b) {
			b.cancel(nil) // its batch was applied while it ran on
		}
		e.scheduleLocked()
		e.mu.Unlock()
	}()
}

// Wait marks the turn's calls complete, waits for every call and returns the
// outcomes in the order the calls were added. A caller that drops the turn
// (the model's response failed) still calls Wait, so nothing it started
// outlives it.
func (e *Executor) Wait() []Outcome {
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
			outs := make([]Outcome, len(e.calls))
			for i, pc := range e.calls {
				outs[i] = pc.out
			}
			e.mu.Unlock()
			return outs
		}
		// A call finished and started the next one after wg.Wait returned;
		// wait again.
		e.scheduleLocked()
		e.mu.Unlock()
	}
}

func allDone(b *batch) bool {
	for _, m := range b.members {
		if !m.done {
			return false
		}
	}
	return true
}

func withCallID(uc *tools.UseContext, id string) *tools.UseContext {
	c := *uc
	c.CallID = id
	return &c
}

package orchestrator

import (
	"context"

	"golang.org/x/sync/semaphore"

	"github.com/agent-mcp/agent-mcp/tools"
)

// DefaultMaxParallel is how many concurrency-safe calls may run at once.
const DefaultMaxParallel = 10

// gate enforces, per session, the rule every caller shares: concurrency-safe
// calls overlap (up to a bound), any other call runs alone. It is a weighted
// semaphore: a safe call takes one unit, an exclusive call takes them all.
// Waiters are served in order, so a stream of safe calls cannot starve an
// exclusive one.
type gate struct {
	n   int64
	sem *semaphore.Weighted
}

type gateKey struct{}

// sessionGate returns the session's gate, making it on first use.
func sessionGate(s *tools.Session, maxParallel int) *gate {
	return s.Slot(gateKey{}, func() any {
		n := int64(maxParallel)
		if n <= 0 {
			n = DefaultMaxParallel
		}
		return &gate{n: n, sem: semaphore.NewWeighted(n)}
	}).(*gate)
}

// acquire waits for room for one call and returns the release function.
func (g *gate) acquire(ctx context.Context, safe bool) (func(), error) {
	w := int64(1)
	if !safe {
		w = g.n
	}
	if err := g.sem.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { g.sem.Release(w) }, nil
}

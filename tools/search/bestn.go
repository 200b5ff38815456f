package search

import "container/heap"

// ranked is a value that orders itself against another: less than zero
// when it ranks before (is better than) the other.
type ranked[T any] interface{ compare(T) int }

// bestN keeps the best-ranked of the values added to it, however many are
// added: a heap whose root is the worst kept, evicted first. The zero
// value is empty and ready.
type bestN[T ranked[T]] struct{ items []T }

// add offers x: it is kept if fewer than n are kept (n < 0: no bound), or
// in place of the worst kept if it ranks before it.
func (h *bestN[T]) add(x T, n int) {
	switch {
	case n < 0 || len(h.items) < n:
		heap.Push(h, x)
	case n > 0 && x.compare(h.items[0]) < 0:
		h.items[0] = x
		heap.Fix(h, 0)
	}
}

func (h *bestN[T]) Len() int           { return len(h.items) }
func (h *bestN[T]) Less(i, j int) bool { return h.items[i].compare(h.items[j]) > 0 }
func (h *bestN[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *bestN[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *bestN[T]) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

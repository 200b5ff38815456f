//go:build !amd64

package search

// useAVX2 is false off amd64: bytePair scans a word at a time.
const useAVX2 = false

// pairIndexAVX2 exists on amd64 only; useAVX2 keeps it from being called
// elsewhere.
func pairIndexAVX2(p []byte, off1, off2 int, m *[4]byte) (cand, next int) {
	panic("search: pairIndexAVX2 called without AVX2")
}

package search

import "golang.org/x/sys/cpu"

// useAVX2 says whether pairIndexAVX2 may run on this processor.
var useAVX2 = cpu.X86.HasAVX2

// pairIndexAVX2 is in pair_amd64.s.
//
//go:noescape
func pairIndexAVX2(p []byte, off1, off2 int, m *[4]byte) (cand, next int)

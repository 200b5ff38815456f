//go:build unix

package search

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGrepRows runs the rows of bench/scale.py (Glob's included) in-process, on the
// tree named by AGENT_MCP_BENCH_TREE (default Go's source tree), for
// profiling (go test -run '^$' -bench GrepRows -cpuprofile cpu.out) and
// for seeing how the work grows with the workers: besides the time, it
// reports the process's CPU time per search (cpu-ms/op) and its ratio to
// the wall time (cores/op, how many cores were kept busy). Run with
// -cpu 1,2,4,8,16: on a machine with fewer cores than GOMAXPROCS, a
// cpu-ms/op that stays flat says more workers add no overhead of their
// own (locks, hand-offs, scheduling), whatever the wall time does.
func BenchmarkGrepRows(b *testing.B) {
	tree := os.Getenv("AGENT_MCP_BENCH_TREE")
	if tree == "" {
		tree = goroot(b) + "/src"
	}
	s := newSession(b, tree)
	for _, bc := range []struct{ name, input string }{
		{"l-literal", `{"pattern":"func NewServer","head_limit":0}`},
		{"l-i-word", `{"pattern":"context","-i":true,"head_limit":0}`},
		{"l-alternation", `{"pattern":"Reader|Writer","head_limit":0}`},
		{"l-class", `{"pattern":"[A-Z][a-z]+Error\\b","head_limit":0}`},
		{"l-noliteral", `{"pattern":"\\w+\\d{3}\\s*\\(","head_limit":0}`},
		{"n-literal", `{"pattern":"func NewServer","output_mode":"content","head_limit":0}`},
		{"n-i-word", `{"pattern":"context","-i":true,"output_mode":"content","head_limit":0}`},
		{"n-class", `{"pattern":"[A-Z][a-z]+Error\\b","output_mode":"content","head_limit":0}`},
		{"c-i-word", `{"pattern":"context","-i":true,"output_mode":"count","head_limit":0}`},
		{"glob", `{"pattern":"**/*.go"}`},
	} {
		tool := Grep()
		if bc.name == "glob" {
			tool = Glob()
		}
		b.Run(bc.name, func(b *testing.B) {
			cpu0, wall0 := processCPU(), time.Now()
			for b.Loop() {
				if text, _, ok := call(b, tool, s, bc.input); !ok {
					b.Fatal(text)
				}
			}
			cpu, wall := processCPU()-cpu0, time.Since(wall0)
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores/op")
		})
	}
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

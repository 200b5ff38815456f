package search

import (
	"os"
	"testing"
)

// BenchmarkGrepRows runs the rows of bench/scale.py in-process, on the
// tree named by AGENT_MCP_BENCH_TREE (default Go's source tree), for
// profiling: go test -run '^$' -bench GrepRows -cpuprofile cpu.out.
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
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if text, _, ok := call(b, Grep(), s, bc.input); !ok {
					b.Fatal(text)
				}
			}
		})
	}
}

package search

import (
	"os/exec"
	"strings"
	"testing"
)

// goroot is Go's installation directory, as the go command reports it.
func goroot(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkGrepGOROOT searches Go's own source tree, in-process.
func BenchmarkGrepGOROOT(b *testing.B) {
	s := newSession(b, goroot(b)+"/src")
	for _, bc := range []struct{ name, input string }{
		{"literal/files", `{"pattern":"ErrNotExist"}`},
		{"literal/content", `{"pattern":"ErrNotExist","output_mode":"content"}`},
		{"insensitive/count", `{"pattern":"deadline","-i":true,"output_mode":"count"}`},
		{"alternation/files", `{"pattern":"ErrClosed|ErrDeadlineExceeded|ErrNoProgress"}`},
		{"class/content", `{"pattern":"[A-Z][a-z]+Error\\(","output_mode":"content"}`},
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

// BenchmarkGlobGOROOT lists Go files in Go's own source tree.
func BenchmarkGlobGOROOT(b *testing.B) {
	s := newSession(b, goroot(b)+"/src")
	for b.Loop() {
		if text, _, ok := call(b, Glob(), s, `{"pattern":"**/*.go"}`); !ok {
			b.Fatal(text)
		}
	}
}

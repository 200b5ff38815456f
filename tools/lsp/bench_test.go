package lsp_test

import (
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
)

// BenchmarkEditDiagnostics times an Edit's result with diagnostics from a
// warm gopls against the same Edit without a language server, in one run:
// each iteration makes one edit of each kind, and the ratio of their
// times is reported (ratio-with/without).
func BenchmarkEditDiagnostics(b *testing.B) {
	svc := goService(b)
	with, without := lspEnv(b, svc), lspEnv(b, nil)
	for _, e := range []*tooltest.Env{with, without} {
		put(b, e.Dir(), "go.mod", goMod)
		put(b, e.Dir(), "util.go", utilGo)
		put(b, e.Dir(), "main.go", "package main\n\nfunc main() {\n\tprintln(Helper(), 1)\n}\n")
		e.OK("Read", map[string]any{"file_path": "main.go"})
	}
	edit := func(i int) map[string]any {
		from, to := "Helper(), 1)", "Helper(), 2)"
		if i%2 == 1 {
			from, to = to, from
		}
		return map[string]any{"file_path": "main.go", "old_string": from, "new_string": to}
	}
	// Warm: gopls has loaded the module and published for main.go.
	with.OK("Edit", edit(0))
	with.OK("Edit", edit(1))
	var tWith, tWithout time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		with.OK("Edit", edit(n))
		tWith += time.Since(start)
		start = time.Now()
		without.OK("Edit", edit(n))
		tWithout += time.Since(start)
		n++
	}
	b.ReportMetric(float64(tWith.Microseconds())/float64(n)/1000, "ms/edit-with")
	b.ReportMetric(float64(tWithout.Microseconds())/float64(n)/1000, "ms/edit-without")
	b.ReportMetric(float64(tWith)/float64(tWithout), "ratio-with/without")
}

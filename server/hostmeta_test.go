package server

import (
	"context"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// TestToolsListMeta: tools/list, as a go-sdk client reads it, carries the
// _meta keys Claude Code reads: alwaysLoad on the core tools only (and on
// none with DeferTools), a searchHint on every tool, and a
// maxResultSizeChars equal to agent-mcp's own budget for the tool.
func TestToolsListMeta(t *testing.T) {
	t.Parallel()
	core := map[string]bool{"Read": true, "Write": true, "Edit": true, "MultiEdit": true,
		"Glob": true, "Grep": true, "Bash": true, "TaskOutput": true}
	for _, deferTools := range []bool{false, true} {
		pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{SearXNGURL: "http://127.0.0.1:1"}), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := New(Options{Name: "agent-mcp", Version: "test", Pipeline: &orchestrator.Pipeline{Pool: pool},
			Session: tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()}, DeferTools: deferTools})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		cs := connectClient(t, srv, nil)
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tools) < 15 {
			t.Fatalf("tools/list gave %d tools", len(list.Tools))
		}
		loaded := 0
		for _, tl := range list.Tools {
			pt, _ := pool.Find(tl.Name)
			hint, _ := tl.Meta[metaSearchHint].(string)
			if hint == "" || len(hint) > 60 {
				t.Errorf("%s: searchHint %q, want a few words", tl.Name, hint)
			}
			always, has := tl.Meta[metaAlwaysLoad]
			if has {
				loaded++
			}
			if want := core[tl.Name] && !deferTools; has != want || (has && always != true) {
				t.Errorf("defer %v: %s: alwaysLoad = %v (present %v), want present %v", deferTools, tl.Name, always, has, want)
			}
			budget := pt.MaxResultSizeChars
			if budget == tools.Unlimited {
				budget = unboundedResultChars
			}
			// JSON numbers arrive as float64.
			if got, _ := tl.Meta[metaMaxResultSizeChars].(float64); int(got) != budget {
				t.Errorf("%s: maxResultSizeChars = %v, want %d", tl.Name, tl.Meta[metaMaxResultSizeChars], budget)
			}
		}
		if want := len(core); !deferTools && loaded != want {
			t.Errorf("%d tools carry alwaysLoad, want the %d core tools", loaded, want)
		}
	}
}

// BenchmarkNew is what a start spends registering the built-in tools with
// the SDK before it can answer initialize (the tools are added on as many
// goroutines as there are processors: -cpu 1,2 compares).
func BenchmarkNew(b *testing.B) {
	pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{SearXNGURL: "http://127.0.0.1:1"}), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Name: "agent-mcp", Version: "test", Pipeline: &orchestrator.Pipeline{Pool: pool},
		Session: tools.SessionOptions{Cwd: b.TempDir(), StateRoot: b.TempDir()}}
	var made []*Server
	b.Cleanup(func() {
		for _, s := range made {
			s.Close()
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		srv, err := New(opts)
		if err != nil {
			b.Fatal(err)
		}
		made = append(made, srv)
	}
}

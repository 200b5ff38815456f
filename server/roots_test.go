//lint:file-ignore SA1019 these tests drive MCP roots, deprecated by SEP-2577 and kept during its deprecation window (roots.go says why)

package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

func TestNarrowDirs(t *testing.T) {
	t.Parallel()
	base := []string{"/work/app", "/work/lib"}
	tests := []struct {
		name  string
		roots []string
		want  []string
	}{
		{"root inside narrows", []string{"/work/app/sub"}, []string{"/work/app/sub"}},
		{"root equal keeps", []string{"/work/app"}, []string{"/work/app"}},
		{"root above keeps the operator dirs under it", []string{"/work"}, []string{"/work/app", "/work/lib"}},
		{"root outside is ignored", []string{"/etc", "/work/app/sub"}, []string{"/work/app/sub"}},
		{"sibling prefix is outside", []string{"/work/app-evil"}, base},
		{"nothing in common keeps the operator dirs", []string{"/etc"}, base},
		{"no roots keeps the operator dirs", nil, base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := narrowDirs(base, tt.roots); !slices.Equal(got, tt.want) {
				t.Fatalf("narrowDirs(%q) = %q, want %q", tt.roots, got, tt.want)
			}
		})
	}
}

// TestRoots_narrowWorkingDirectories runs a client whose one root is a
// subdirectory of the operator's directory: a file in the root is read
// without asking, one beside it is outside the session's directories.
func TestRoots_narrowWorkingDirectories(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testRootsNarrow(t, version) })
	}
}

func testRootsNarrow(t *testing.T, version string) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	for _, f := range []string{"ws/proj/in.txt", "ws/other/beside.txt"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pool, err := orchestrator.AssemblePool([]*tools.Tool{fs.Read()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Name: "t", Version: "0",
		Pipeline: &orchestrator.Pipeline{Pool: pool, Permit: permit.New(permit.Options{TrustHost: true})},
		Session:  tools.SessionOptions{Cwd: ws, StateRoot: filepath.Join(root, "state")}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil)
	c.AddRoots(&mcp.Root{URI: "file://" + filepath.Join(ws, "proj")}, &mcp.Root{URI: "file:///etc"})
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	read := func(p string) (string, bool) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": p}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	if text, isErr := read(filepath.Join(ws, "proj/in.txt")); isErr {
		t.Fatalf("a file in the root: %s", text)
	}
	if text, isErr := read(filepath.Join(ws, "other/beside.txt")); !isErr || !strings.Contains(text, "outside the working directories") {
		t.Fatalf("a file outside the root must be asked about (and refused without elicitation): %s", text)
	}
	if text, isErr := read("/etc/hostname"); !isErr {
		t.Fatalf("a root outside the operator's directories must not widen them: %s", text)
	}
	// The client withdraws the narrowing root: the operator's directories
	// come back (never wider).
	c.RemoveRoots("file://" + filepath.Join(ws, "proj"))
	testbin.WaitFor(t, "the roots change to be applied", func() bool {
		_, isErr := read(filepath.Join(ws, "other/beside.txt"))
		return !isErr
	})
}

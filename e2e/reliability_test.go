package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEditsAcrossProcesses runs several `agent-mcp serve` processes on one
// workspace, each making concurrent Edits to the same file, and checks
// that every edit reported as done is in the file: writers in different
// processes take turns on the file's lock and compute each edit from what
// the previous one left.
func TestEditsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several servers")
	}
	const perProcess = 10
	for _, procs := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("%d_processes", procs), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "shared.txt")
			var b strings.Builder
			for p := range procs {
				for i := range perProcess {
					fmt.Fprintf(&b, "slot %d.%d: todo\n", p, i)
				}
			}
			if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			clients := make([]*mcp.ClientSession, procs)
			for p := range procs {
				clients[p] = stdioClient(t, dir)
				res, err := clients[p].CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": file}})
				if err != nil || res.IsError {
					t.Fatalf("Read in process %d: %v %s", p, err, text(t, res))
				}
			}
			var wg sync.WaitGroup
			for p, cs := range clients {
				for i := range perProcess {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Edit", Arguments: map[string]any{
							"file_path":  file,
							"old_string": fmt.Sprintf("slot %d.%d: todo\n", p, i),
							"new_string": fmt.Sprintf("slot %d.%d: done by process %d\n", p, i, p),
						}})
						if err != nil || res.IsError {
							t.Errorf("Edit %d.%d: %v %s", p, i, err, text(t, res))
						}
					}()
				}
			}
			wg.Wait()
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			lost := 0
			for p := range procs {
				for i := range perProcess {
					if !strings.Contains(string(got), fmt.Sprintf("slot %d.%d: done by process %d\n", p, i, p)) {
						lost++
					}
				}
			}
			if lost > 0 || strings.Contains(string(got), "todo") {
				t.Fatalf("%d of %d edits reported as done are missing from the file:\n%s", lost, procs*perProcess, got)
			}
		})
	}
}

// TestBashOutputPersistedWhole runs a command printing 1.3 MB, more than
// a result keeps in memory (head and tail), and reads the persisted
// result back through resources/read: it is the command's whole output,
// byte for byte.
func TestBashOutputPersistedWhole(t *testing.T) {
	dir := t.TempDir()
	cs := stdioClient(t, dir)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "seq 1 200000"}})
	if err != nil || res.IsError {
		t.Fatalf("Bash: %v %s", err, text(t, res))
	}
	var want strings.Builder
	for i := 1; i <= 200000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	block := text(t, res)
	if !strings.HasPrefix(block, "<persisted-output>\nOutput too large (1.2MB). Full output saved to: ") {
		t.Fatalf("result %q", block[:min(len(block), 300)])
	}
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil {
		t.Fatal("no resource_link in the result")
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	if err != nil {
		t.Fatal(err)
	}
	if got := read.Contents[0].Text; got != want.String() {
		t.Fatalf("the persisted result has %d bytes, want the command's %d; it ends %q", len(got), want.Len(), got[max(0, len(got)-40):])
	}
}

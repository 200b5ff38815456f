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

package search

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeMatchingTree writes files of lines that all match "line", size
// bytes in total, as files of fileSize bytes.
func writeMatchingTree(t testing.TB, dir string, size, fileSize int) {
	t.Helper()
	var b bytes.Buffer
	for i := 0; b.Len() < fileSize; i++ {
		fmt.Fprintf(&b, "line %d of a file where every line matches the pattern\n", i)
	}
	content := b.Bytes()
	for i := 0; i*len(content) < size; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.txt", i)), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGrepMemoryBounded searches a tree in which every line matches and
// checks the heap never grows by more than a fraction of the tree's size:
// only the page of output is kept, whatever the match count. The 1 GB
// version runs with AGENT_MCP_BENCH=1 (TestGrepMemory1GB).
func TestGrepMemoryBounded(t *testing.T) {
	const treeSize = 24 << 20
	const bound = 12 << 20
	dir := t.TempDir()
	writeMatchingTree(t, dir, treeSize, 256<<10+1000) // files a little over the read buffer
	s := newSession(t, dir)
	for _, mode := range []string{"content", "count", "files_with_matches"} {
		t.Run(mode, func(t *testing.T) {
			// The live heap measured at each collection is what the search
			// retains; garbage (plentiful under -race, where sync.Pool drops
			// the regexp machines) does not count.
			// Collect often, so the live heap is measured many times
			// during the search.
			defer debug.SetGCPercent(debug.SetGCPercent(5))
			runtime.GC()
			before := liveHeap()
			var peak atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if v := liveHeap(); v > peak.Load() {
						peak.Store(v)
					}
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			text, out, ok := call(t, Grep(), s, fmt.Sprintf(`{"pattern":"line \\d+ of","output_mode":%q,"-C":1}`, mode))
			close(stop)
			wg.Wait()
			if !ok {
				t.Fatal(text)
			}
			if o := out.(GrepOutput); o.NumMatches == 0 && mode != "files_with_matches" {
				t.Fatalf("no matches counted: %+v", o)
			}
			runtime.GC()
			if v := liveHeap(); v > peak.Load() {
				peak.Store(v)
			}
			t.Logf("live heap grew by %.1f MB", float64(int64(peak.Load())-int64(before))/(1<<20))
			if grew := int64(peak.Load()) - int64(before); grew > bound {
				t.Fatalf("heap grew by %d MB searching a %d MB tree; want under %d MB", grew>>20, treeSize>>20, bound>>20)
			}
		})
	}
}

// TestGrepMemory1GB runs the real binary over stdio (go-sdk client) on a
// 1 GB tree in which every line matches, and checks the server's peak
// resident memory stays under 100 MB. It takes a while, so it runs only
// with AGENT_MCP_BENCH=1 (bench/search.sh sets it).
func TestGrepMemory1GB(t *testing.T) {
	if os.Getenv("AGENT_MCP_BENCH") != "1" {
		t.Skip("set AGENT_MCP_BENCH=1 to run the 1 GB memory test (bench/search.sh does)")
	}
	dir := os.Getenv("AGENT_MCP_BENCH_MEMTREE")
	if dir == "" {
		dir = t.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "d000")); err != nil {
		writeMatchingTree(t, dir, 1<<30, 4<<20)
	}
	bin := filepath.Join(t.TempDir(), "agent-mcp")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	server := exec.Command(bin, "serve")
	server.Dir = dir
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memtest", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, mode := range []string{"content", "count", "files_with_matches"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Grep", Arguments: map[string]any{"pattern": "line", "output_mode": mode}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", mode, err, res)
		}
		hwm := vmHWM(t, server.Process.Pid)
		t.Logf("after %s over 1 GB: server peak RSS %d MB", mode, hwm>>20)
		if hwm > 100<<20 {
			t.Fatalf("server peak RSS %d MB, want under 100 MB", hwm>>20)
		}
	}
}

// liveHeap is the heap's live size as of the last garbage collection.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// vmHWM reads a process's peak resident set size in bytes (Linux).
func vmHWM(t *testing.T, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
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
					t.Fatalf("Read in process %d: %v %s", p, err, testbin.Text(t, res))
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
							t.Errorf("Edit %d.%d: %v %s", p, i, err, testbin.Text(t, res))
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
	t.Parallel()
	dir := t.TempDir()
	cs := stdioClient(t, dir)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "seq 1 200000"}})
	if err != nil || res.IsError {
		t.Fatalf("Bash: %v %s", err, testbin.Text(t, res))
	}
	var want strings.Builder
	for i := 1; i <= 200000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	block := testbin.Text(t, res)
	if !strings.HasPrefix(block, "<persisted-output>\nOutput too large (1.2MB). Full output saved to: ") {
		t.Fatalf("result %q", block[:min(len(block), 300)])
	}
	if got := readLinked(ctx, t, cs, res); got != want.String() {
		t.Fatalf("the persisted result has %d bytes, want the command's %d; it ends %q", len(got), want.Len(), got[max(0, len(got)-40):])
	}
}

// cpuTicks is the CPU time (user and system, in clock ticks) process pid
// has used so far.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name (which is in parentheses).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// TestReadCancelledOnAHugeLine reads the line after a 10 GiB one (a sparse
// file: no disk used) and cancels the call: the server stops scanning at
// once, its CPU goes idle well before the ~25 s the scan takes, and the
// session goes on serving.
func TestReadCancelledOnAHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("scans a large sparse file")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "sparse.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// Text first (Read sniffs the start for NUL bytes), then 10 GiB
	// of holes: line 2 is 10 GiB long.
	if _, err := f.WriteString("first line\n" + strings.Repeat("text ", 4000)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(10 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cmd := testbin.ServeCmd(t, binary, dir)
	cs := testbin.Stdio(t, cmd, nil)
	pid := cmd.Process.Pid

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": p, "offset": 3, "limit": 1}})
		errc <- err
	}()
	// Wait until the server is busy scanning, then cancel.
	start := cpuTicks(t, pid)
	testbin.WaitFor(t, "the Read to start scanning", func() bool { return cpuTicks(t, pid)-start >= 20 })
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled Read reported success")
	}
	// Idle: no more than 5 ticks (50ms) of CPU over half a second, well
	// before the scan of 10 GiB could have ended.
	cancelled := time.Now()
	testbin.WaitFor(t, "the server's CPU to go idle", func() bool {
		before := cpuTicks(t, pid)
		time.Sleep(500 * time.Millisecond)
		return cpuTicks(t, pid)-before <= 5
	})
	t.Logf("idle %v after the cancellation", time.Since(cancelled).Round(10*time.Millisecond))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": p, "offset": 1, "limit": 1}})
	if err != nil || res.IsError || testbin.Text(t, res) != "1\tfirst line" {
		t.Fatalf("Read after the cancellation: %v %q", err, testbin.Text(t, res))
	}
}

// TestCapsOnTheBinary hits the caps set by flags on the real binary: the
// background tasks of a session and the sessions of an HTTP server; and
// sends the bearer scheme in lowercase.
func TestCapsOnTheBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("background_tasks", func(t *testing.T) {
		cs := stdioClient(t, t.TempDir(), "--max-background-tasks", "1")
		bg := map[string]any{"command": "sleep 300", "run_in_background": true}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: bg}); err != nil || res.IsError {
			t.Fatalf("the first background task: %v %s", err, testbin.Text(t, res))
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: bg})
		if err != nil || !res.IsError || !strings.Contains(testbin.Text(t, res), "already has 1 background tasks running, the most allowed (--max-background-tasks)") {
			t.Fatalf("a second background task: %v %s", err, testbin.Text(t, res))
		}
	})
	t.Run("server_background_tasks", func(t *testing.T) {
		url := startHTTP(t, t.TempDir(), "--token", "s3cret", "--max-server-background-tasks", "1")
		bg := map[string]any{"command": "sleep 300", "run_in_background": true}
		first, second := httpClient(t, url, "s3cret"), httpClient(t, url, "s3cret")
		if res, err := first.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: bg}); err != nil || res.IsError {
			t.Fatalf("the first session's background task: %v %s", err, testbin.Text(t, res))
		}
		res, err := second.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: bg})
		if err != nil || !res.IsError || !strings.Contains(testbin.Text(t, res), "this server already has 1 background tasks running across its sessions, the most allowed (--max-server-background-tasks)") {
			t.Fatalf("a second session's background task: %v %s", err, testbin.Text(t, res))
		}
	})
	t.Run("input_bytes", func(t *testing.T) {
		dir := t.TempDir()
		cs := stdioClient(t, dir, "--max-input-bytes", "1000")
		path := filepath.Join(dir, "big.txt")
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Write", Arguments: map[string]any{"file_path": path, "content": strings.Repeat("x", 2000)}})
		if err != nil || !res.IsError || !strings.Contains(testbin.Text(t, res), "over the largest accepted, 1000 bytes (--max-input-bytes)") {
			t.Fatalf("a Write over the cap: %v %s", err, testbin.Text(t, res))
		}
		if _, err := os.Stat(path); err == nil {
			t.Error("the Write over the cap created its file")
		}
	})
	t.Run("http_sessions", func(t *testing.T) {
		// The cap counts MCP sessions: clients of protocol 2025-11-25 (those
		// of 2026-07-28 have none over HTTP; they share their token's state).
		url := startHTTP(t, t.TempDir(), "--token", "s3cret", "--max-sessions", "1")
		first := testbin.HTTPVersion(t, url, "s3cret", nil, "2025-11-25")
		if _, err := first.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		second := testbin.HTTPVersion(t, url, "s3cret", nil, "2025-11-25") // closes the idle first one
		if _, err := second.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		testbin.WaitFor(t, "the first session to be closed", func() bool { _, err := first.ListTools(ctx, nil); return err != nil })
	})
	t.Run("http_body", func(t *testing.T) {
		// With the defaults the body cap is the input cap (10 MiB) plus 1
		// MiB: a 9MB Write fits, a larger body is refused naming the flag.
		dir := t.TempDir()
		url := startHTTP(t, dir, "--token", "s3cret")
		cs := httpClient(t, url, "s3cret")
		content := strings.Repeat("an ordinary line of generated content for the big write\n", 9_000_000/56+1)[:9_000_000]
		path := filepath.Join(dir, "nine.txt")
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Write", Arguments: map[string]any{"file_path": path, "content": content}})
		if err != nil || res.IsError {
			t.Fatalf("a 9MB Write over HTTP with the default caps: %v %s", err, testbin.Text(t, res))
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Fatalf("the file holds %d bytes (%v), want the %d written", len(got), err, len(content))
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 12<<20) + `"}}`
		status, msg := postRPC(t, url, body, map[string]string{"Authorization": "Bearer s3cret"}, "")
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "exceeds the limit of 11534336 bytes (--max-body-bytes; by default the largest tool call input, --max-input-bytes, and 1 MiB around it)") {
			t.Fatalf("a 12MB body: %d %s", status, msg)
		}
	})
	t.Run("lowercase_bearer", func(t *testing.T) {
		url := startHTTP(t, t.TempDir(), "--token", "s3cret")
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		if status, _ := postRPC(t, url, body, map[string]string{"Authorization": "bearer s3cret"}, ""); status != http.StatusOK {
			t.Fatalf("Authorization: bearer ...: %d", status)
		}
	})
}

// TestLargeWriteMemory sends a 20MB Write to the real binary over stdio
// and over HTTP on 127.0.0.1 (in a 2025-11-25 session and sessionless,
// 2026-07-28) and reads how much its peak resident memory (VmHWM) rose:
// about twice the content (the line or body is held once, the content
// decoded once into its string; measured 2.0 on each). The bound, 2.6
// times, leaves room for the runtime's own variation and fails if one
// more copy of the content comes back (the SDK's decoding of the message
// or body, the permission check's, the tool input's).
func TestLargeWriteMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 20MB message")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	for _, tc := range []struct {
		name    string
		connect func(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession
	}{
		{"stdio", func(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession { return testbin.Stdio(t, cmd, nil) }},
		{"http_session", func(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
			return testbin.HTTPVersion(t, testbin.StartHTTP(t, cmd), "s3cret", nil, "2025-11-25")
		}},
		{"http_sessionless", func(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
			cs := testbin.HTTP(t, testbin.StartHTTP(t, cmd), "s3cret", nil)
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %s over HTTP, want 2026-07-28", v)
			}
			return cs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := []string{"--max-input-bytes", "25000000"}
			if tc.name != "stdio" {
				args = append(args, "--http", "--addr", "127.0.0.1:0", "--token", "s3cret")
			}
			cmd := testbin.ServeCmd(t, binary, dir, args...)
			cs := tc.connect(t, cmd)
			ctx := context.Background()
			write := func(name, content string) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Write", Arguments: map[string]any{"file_path": filepath.Join(dir, name), "content": content}})
				if err != nil || res.IsError {
					t.Fatalf("Write %s: %v %s", name, err, testbin.Text(t, res))
				}
			}
			write("small.txt", "warm up\n")
			before := peakRSS(t, cmd.Process.Pid)
			const size = 20_000_000
			content := strings.Repeat("an ordinary line of generated content for the big write\n", size/56+1)[:size]
			write("big.txt", content)
			rise := float64(peakRSS(t, cmd.Process.Pid)-before) / size
			t.Logf("a %d-byte Write raised the server's peak memory by %.1f times its size", size, rise)
			if rise > 2.6 {
				t.Errorf("a %d-byte Write raised the server's peak memory by %.1f times its size, want at most 2.6", size, rise)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "big.txt")); err != nil || string(got) != content {
				t.Fatalf("the file holds %d bytes (%v), want the %d written", len(got), err, size)
			}
		})
	}
}

// peakRSS is the process's peak resident memory in bytes (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM: %q", rest)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

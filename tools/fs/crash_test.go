//go:build unix

package fs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

const (
	crashEnv   = "AGENT_MCP_FS_CRASH_DIR"
	crashFiles = 4
	// crashFileSize makes each write take long enough (milliseconds) that
	// a kill sent as soon as the write shows on disk lands in its middle.
	crashFileSize = 4 << 20
)

// crashContent is generation gen of file k: a header line, then the header
// repeated to a fixed size, then an end marker. A torn write cannot pass
// for a whole generation.
func crashContent(k, gen int) string {
	header := fmt.Sprintf("file %d generation %d\n", k, gen)
	body := strings.Repeat(header, crashFileSize/len(header))
	return header + body + "end\n"
}

// TestWriteSurvivesSIGKILL kills a process that rewrites files of a few
// MB through the Write tool in a tight loop, at the moment the disk shows
// a write under way, and checks that every file holds a whole generation:
// old or new, never a mix, never empty. Each round lets the child finish
// some writes, then kills it at the first (or a later) change to the
// directory's entries: the creation of a temporary file for an atomic
// writer, or the truncation of the file itself for a writer that rewrites
// it in place, which the kill then catches with the bytes still going in.
func TestWriteSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, round := range []struct{ writes, change int }{{0, 1}, {2, 1}, {1, 3}, {5, 1}, {3, 5}} {
		t.Run(fmt.Sprintf("after_%d_writes_at_change_%d", round.writes, round.change), func(t *testing.T) {
			dir := t.TempDir()
			names := make([]string, crashFiles)
			for k := range crashFiles {
				names[k] = fmt.Sprintf("f%d.txt", k)
				if err := os.WriteFile(filepath.Join(dir, names[k]), []byte(crashContent(k, 0)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Mkdir(filepath.Join(dir, ".state"), 0o700); err != nil {
				t.Fatal(err)
			}
			w := watchDir(t, dir)
			defer w.close()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
			cmd.Env = append(os.Environ(), crashEnv+"="+dir)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Count the child's finished writes; stop watching if it dies.
			var wrote atomic.Int32
			ready := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					switch {
					case sc.Text() == "ready":
						close(ready)
					case strings.HasPrefix(sc.Text(), "wrote "):
						wrote.Add(1)
					}
				}
				w.close()
			}()
			<-ready
			seen := 0
			for seen < round.change {
				n := w.next()
				if n == 0 {
					cmd.Wait()
					t.Fatal("the child exited before it was killed")
				}
				if int(wrote.Load()) >= round.writes {
					seen += n
				}
			}
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()

			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				// A temporary file of the write cut short may remain;
				// nothing else may appear.
				if !slices.Contains(names, e.Name()) && !strings.HasSuffix(e.Name(), ".tmp") && e.Name() != ".state" {
					t.Errorf("unexpected entry %s", e.Name())
				}
			}
			for k, name := range names {
				p := filepath.Join(dir, name)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				var gotK, gen int
				if _, err := fmt.Sscanf(string(b), "file %d generation %d\n", &gotK, &gen); err != nil || gotK != k {
					t.Fatalf("%s (%d bytes) starts %q: not a whole generation", p, len(b), b[:min(len(b), 40)])
				}
				if string(b) != crashContent(k, gen) {
					t.Fatalf("%s is a torn write of generation %d (%d bytes)", p, gen, len(b))
				}
			}
		})
	}
}

// TestCrashChild is the process TestWriteSurvivesSIGKILL kills: it reads
// the files through the pipeline, then rewrites them with the Write tool
// in a loop, printing a line after each write, until it is killed. The
// inputs are made before the loop, and given to the tool as values (not
// megabytes of JSON, slow to decode under the race detector), so the loop
// spends its time in the tool.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("helper process for TestWriteSurvivesSIGKILL")
	}
	pool, err := orchestrator.AssemblePool(fileTools(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &orchestrator.Pipeline{Pool: pool}
	s, err := tools.NewSession(tools.SessionOptions{Cwd: dir, StateRoot: filepath.Join(dir, ".state")})
	if err != nil {
		t.Fatal(err)
	}
	uc := &tools.UseContext{Session: s}
	for k := range crashFiles {
		raw, _ := json.Marshal(map[string]any{"file_path": fmt.Sprintf("f%d.txt", k), "limit": 1})
		out := p.Run(context.Background(), uc, orchestrator.Call{Name: "Read", Input: raw}, nil)
		if out.Err != nil || out.Result.IsError {
			t.Fatalf("Read: %v %+v", out.Err, out.Result)
		}
	}
	write := fs.Write(fs.Options{})
	const gens = 2
	inputs := make([]*tools.Input, 0, crashFiles*gens)
	for gen := 1; gen <= crashFiles*gens; gen++ {
		k := gen % crashFiles
		raw, _ := json.Marshal(fs.WriteInput{FilePath: fmt.Sprintf("f%d.txt", k), Content: crashContent(k, gen)})
		in, err := write.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, in)
	}
	// Yield the processor to the watching parent as soon as it wakes, so
	// its kill follows the change it saw without delay.
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19)
	fmt.Println("ready")
	for i := 0; ; i++ {
		res, err := inputs[i%len(inputs)].Call(context.Background(), uc, nil)
		if err != nil || res.IsError {
			t.Fatalf("Write: %v %+v", err, res)
		}
		fmt.Printf("wrote %d\n", i+1)
	}
}

package fs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

const (
	crashEnv   = "AGENT_MCP_FS_CRASH_DIR"
	crashFiles = 6
	// crashFileSize makes each write long enough to be caught midway.
	crashFileSize = 256 << 10
)

// crashContent is generation gen of file k: a header line, then the header
// repeated to a fixed size, then an end marker. A torn write cannot pass
// for a whole generation.
func crashContent(k, gen int) string {
	header := fmt.Sprintf("file %d generation %d\n", k, gen)
	body := strings.Repeat(header, crashFileSize/len(header))
	return header + body + "end\n"
}

// TestWriteSurvivesSIGKILL kills a process in the middle of many Writes
// and checks that every file holds a whole generation: old or new, never a
// mix, never empty.
func TestWriteSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for round, after := range []int{3, 11, 17, 29, 41, 53} {
		t.Run(fmt.Sprintf("killed_after_%d_writes", after), func(t *testing.T) {
			dir := t.TempDir()
			for k := range crashFiles {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", k)), []byte(crashContent(k, 0)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
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
			sc := bufio.NewScanner(stdout)
			wrote := 0
			for wrote < after && sc.Scan() {
				if strings.HasPrefix(sc.Text(), "wrote ") {
					wrote++
				}
			}
			// The child is now somewhere inside its next Write.
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if wrote < after {
				t.Fatalf("child stopped after %d writes (round %d)", wrote, round)
			}
			for k := range crashFiles {
				p := filepath.Join(dir, fmt.Sprintf("f%d.txt", k))
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				var gotK, gen int
				if _, err := fmt.Sscanf(string(b), "file %d generation %d\n", &gotK, &gen); err != nil || gotK != k {
					t.Fatalf("%s starts %q: not a whole generation", p, b[:min(len(b), 40)])
				}
				if string(b) != crashContent(k, gen) {
					t.Fatalf("%s is a torn write of generation %d (%d bytes)", p, gen, len(b))
				}
			}
		})
	}
}

// TestCrashChild is the process TestWriteSurvivesSIGKILL kills: it reads
// the files, then rewrites them through the Write tool in a loop, printing
// a line after each write, until it is killed.
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
	run := func(name string, in map[string]any) {
		raw, _ := json.Marshal(in)
		out := p.Run(context.Background(), uc, orchestrator.Call{Name: name, Input: raw}, nil)
		if out.Err != nil || out.Result.IsError {
			fmt.Printf("error %v %+v\n", out.Err, out.Result)
			os.Exit(1)
		}
	}
	for k := range crashFiles {
		run("Read", map[string]any{"file_path": fmt.Sprintf("f%d.txt", k), "limit": 1})
	}
	for gen := 1; ; gen++ {
		k := gen % crashFiles
		run("Write", map[string]any{"file_path": fmt.Sprintf("f%d.txt", k), "content": crashContent(k, gen)})
		fmt.Printf("wrote %d\n", gen)
	}
}

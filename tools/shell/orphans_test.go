package shell

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/tools"
)

// grandchildren is a command whose shell leaves two children running until
// it is killed.
func grandchildren(m string) string {
	return "sleep " + m + " & sleep " + m + " & wait"
}

// TestOrphans_timeout_with_background_off: with background tasks off
// (internal/cli sets the option from AGENT_MCP_DISABLE_BACKGROUND_TASKS),
// a command that times out is stopped, its grandchildren with it.
func TestOrphans_timeout_with_background_off(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	m := marker()
	opts := Options{DisableBackground: true, KillGrace: testOpts.KillGrace}
	res := mustCall(t, Bash(opts), s, map[string]any{"command": "echo partial; " + grandchildren(m), "timeout": 300})
	out := bashOut(t, res)
	if !res.IsError || out.BackgroundTaskID != "" || !out.Interrupted || !strings.Contains(res.Text, "timed out after 300ms") {
		t.Errorf("timeout with background off: %+v %q", out, res.Text)
	}
	waitProcs(t, m, 0)
}

func TestOrphans_cancellation(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	m := marker()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		done <- failure(call(t, ctx, Bash(testOpts), s, map[string]any{"command": grandchildren(m)}, nil))
	}()
	waitProcs(t, m, 2)
	cancel()
	if msg := <-done; !strings.Contains(msg, "stopped") {
		t.Errorf("cancelled call: error = %q", msg)
	}
	waitProcs(t, m, 0)
}

func TestOrphans_session_close(t *testing.T) {
	t.Parallel()
	s, err := tools.NewSession(tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := marker()
	// A background task, a foreground command moved to the background by
	// its timeout, and a finished foreground command that left a process
	// behind.
	mustCall(t, Bash(testOpts), s, map[string]any{"command": grandchildren(m), "run_in_background": true})
	mustCall(t, Bash(testOpts), s, map[string]any{"command": grandchildren(m), "timeout": 100})
	res := mustCall(t, Bash(testOpts), s, map[string]any{"command": "sleep " + m + " >/dev/null 2>&1 & echo left"})
	if res.Text != "left" {
		t.Errorf("command leaving a process behind: %q", res.Text)
	}
	waitProcs(t, m, 5)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitProcs(t, m, 0)
	// No new command starts in a closed session's manager.
	if _, err := managerFor(s).start(startSpec{script: "true"}); err == nil {
		t.Errorf("start after close succeeded")
	}
}

func TestOrphans_finished_foreground_command_with_leftover_output_holder(t *testing.T) {
	t.Parallel()
	// A background child keeping the output pipe open must not hold the
	// call: it returns once the shell exits.
	s := newSession(t)
	m := marker()
	res := mustCall(t, Bash(testOpts), s, map[string]any{"command": "sleep " + m + " & echo shell done"})
	if res.Text != "shell done" {
		t.Errorf("text = %q", res.Text)
	}
	waitProcs(t, m, 1)
	_ = s.Close()
	waitProcs(t, m, 0)
}

// rss returns the process's resident set size in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

func TestBash_huge_output_keeps_memory_bounded(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 500MB")
	}
	s := newSession(t)
	before := rss(t)
	const printed = 500_000_000
	res := mustCall(t, Bash(Options{OutputFileLimit: 8 << 20}), s, map[string]any{"command": "yes | head -c 500000000"})
	after := rss(t)
	// The window kept in memory is about 1MB; allow generous slack for
	// the runtime, but far less than what was printed.
	if grew := after - before; grew > 100<<20 {
		t.Errorf("RSS grew by %d MB while the command printed %d MB", grew>>20, printed>>20)
	}
	if len(res.Text) > 2*resultWindow || !strings.HasPrefix(res.Text, "<persisted-output>") {
		t.Errorf("text of %d bytes (%.100q), want the persisted-output block", len(res.Text), res.Text)
	}
	// The persisted result is the task's output file, which is capped.
	st, err := os.Stat(persistedPath(t, res))
	if err != nil || st.Size() > 9<<20 || st.Size() < 8<<20 {
		t.Errorf("persisted output: %v, %v; want it capped near 8MB", st, err)
	}
}

// TestOrphans_leftover_is_let_go_once_its_processes_end: a finished
// foreground command whose leftover process holds its output keeps its
// output file's descriptor and its task only while that process lives;
// after it ends, the next command lets both go. Before, each such command
// held them until the session ended.
func TestOrphans_leftover_is_let_go_once_its_processes_end(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	m := marker()
	res := mustCall(t, Bash(testOpts), s, map[string]any{"command": "sleep " + m + " & echo $!"})
	pid, err := strconv.Atoi(strings.TrimSpace(res.Text))
	if err != nil {
		t.Fatalf("the leftover's pid: %q", res.Text)
	}
	mgr := managerFor(s)
	mgr.mu.Lock()
	if len(mgr.order) != 1 {
		t.Fatalf("%d tasks kept, want the leftover's", len(mgr.order))
	}
	left := mgr.order[0]
	mgr.mu.Unlock()
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
	waitProcs(t, m, 0)
	testbin.WaitFor(t, "the next command to let the leftover's task and output file go", func() bool {
		mustCall(t, Bash(testOpts), s, map[string]any{"command": "true"})
		mgr.mu.Lock()
		_, kept := mgr.tasks[left.ID]
		mgr.mu.Unlock()
		left.out.mu.Lock()
		open := left.out.file != nil
		left.out.mu.Unlock()
		return !kept && !open
	})
}

package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// running reports whether pid is a process that has not exited (a zombie
// waiting for its reaper counts as exited).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// TestStartInGroup_cancelEndsTheGroup: cancelling the context ends the
// child the command started too, not only the command.
func TestStartInGroup_cancelEndsTheGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 300 & echo $!; wait")
	StartInGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("reading the child's pid: %v (%q)", err, buf[:n])
	}
	if !Exists(cmd.Process.Pid) || !running(child) {
		t.Fatal("the group or its child is not there while the command runs")
	}
	cancel()
	_ = cmd.Wait()
	testbin.WaitFor(t, "the command's child to end with it", func() bool { return !running(child) })
}

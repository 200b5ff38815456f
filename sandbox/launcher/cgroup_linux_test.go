package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestUnescapeMountinfo(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/sys/fs/cgroup":         "/sys/fs/cgroup",
		`/mnt/with\040space`:     "/mnt/with space",
		`/a\011tab\134backslash`: "/a\ttab\\backslash",
		`/not\x escaped`:         `/not\x escaped`,
		`/short\04`:              `/short\04`,
	} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

// CgroupParent names a directory of the cgroup v2 hierarchy holding this
// process, where there is one.
func TestCgroupParent(t *testing.T) {
	t.Parallel()
	dir, err := CgroupParent()
	if err != nil {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	b, err := os.ReadFile(dir + "/cgroup.procs")
	if err != nil {
		t.Fatalf("%s is not a cgroup directory: %v", dir, err)
	}
	if !strings.Contains(" "+strings.Join(strings.Fields(string(b)), " ")+" ", " "+strconv.Itoa(os.Getpid())+" ") {
		t.Errorf("%s does not list this process (%d)", dir, os.Getpid())
	}
}

// RemoveStaleCgroups removes the empty command cgroups of servers that are
// gone, and nothing else (a plain directory stands in for the cgroup v2
// parent: rmdir refuses a non-empty one as the kernel refuses a busy
// cgroup).
func TestRemoveStaleCgroups(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := dead.Process.Pid // reaped: no process has it now (unless reused at once)
	live := os.Getpid()
	parent := t.TempDir()
	dirs := map[string]bool{ // name: removed
		fmt.Sprintf("agent-mcp-%d-1", gone):   true,
		fmt.Sprintf("agent-mcp-%d-2", gone):   false, // not empty: still holds something
		fmt.Sprintf("agent-mcp-%d-3", live):   false, // this server's own
		fmt.Sprintf("agent-mcp-%d-x", gone):   false, // not a command's cgroup
		fmt.Sprintf("agent-mcp-0%d-4", gone):  false,
		fmt.Sprintf("other-%d-5", gone):       false,
		fmt.Sprintf("agent-mcp-%d", gone):     false,
		fmt.Sprintf("agent-mcp-%d-6-7", gone): false,
		fmt.Sprintf("agent-mcp-%d-8.x", gone): false,
	}
	for name := range dirs {
		if err := os.Mkdir(filepath.Join(parent, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(parent, fmt.Sprintf("agent-mcp-%d-2", gone), "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(gone, 0) == nil {
		t.Skipf("pid %d was reused at once", gone)
	}
	if n := RemoveStaleCgroups(parent); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	for name, removed := range dirs {
		_, err := os.Stat(filepath.Join(parent, name))
		if got := os.IsNotExist(err); got != removed {
			t.Errorf("%s removed: %v, want %v (%v)", name, got, removed, err)
		}
	}
}

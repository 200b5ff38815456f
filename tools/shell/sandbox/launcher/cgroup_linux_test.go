package launcher

import (
	"os"
	"strconv"
	"strings"
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

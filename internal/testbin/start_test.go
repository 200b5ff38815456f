package testbin

import (
	"os/exec"
	"slices"
	"testing"
)

// TestStartServer_returns_each_prefix_in_order: lines come in any order,
// the first line with each prefix counts, and the process is still
// running (and ended by the test's cleanup) when the answer comes.
func TestStartServer_returns_each_prefix_in_order(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", `echo "noise" >&2; echo "admin at B1 x" >&2; echo "serving at A1" >&2; echo "serving at A2" >&2; exec sleep 600`)
	got := StartServer(t, cmd, "serving at ", "admin at ")
	if want := []string{"A1", "B1 x"}; !slices.Equal(got, want) {
		t.Errorf("StartServer = %q, want %q", got, want)
	}
	if cmd.ProcessState != nil {
		t.Errorf("the process has ended already: %v", cmd.ProcessState)
	}
}

package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGreetingUnderGoRun: a binary `go run` built is deleted by Go, so the
// greeting does not offer its path for registering; it says to build or
// install one and register that. An installed binary's own path is given.
func TestGreetingUnderGoRun(t *testing.T) {
	t.Parallel()
	tmp, cache := goBuildDirs()
	for _, tc := range []struct {
		exe   string
		goRun bool
	}{
		{filepath.Join(tmp, "go-build2086920598", "b001", "exe", "agent-mcp"), true},
		{filepath.Join(cache, "3f", "3f0a9c-d", "agent-mcp"), true},
		{"/usr/local/bin/agent-mcp", false},
		{filepath.Join(tmp, "agent-mcp"), false},
	} {
		g := greeting(tc.exe, "sandbox: off")
		if got := builtByGoRun(tc.exe, tmp, cache); got != tc.goRun {
			t.Errorf("builtByGoRun(%s) = %v, want %v", tc.exe, got, tc.goRun)
		}
		offered := strings.Contains(g, "claude mcp add agent-mcp -- "+tc.exe+" serve")
		told := strings.Contains(g, "go build -o agent-mcp .") && strings.Contains(g, "go install github.com/agent-mcp/agent-mcp@latest") &&
			strings.Contains(g, "register that path")
		if offered == tc.goRun || told != tc.goRun {
			t.Errorf("greeting for %s (go run: %v) offers its path %v, says to build one %v:\n%s", tc.exe, tc.goRun, offered, told, g)
		}
		if strings.Count(g, "\n") != 0 || !strings.HasSuffix(g, " Bash sandbox: off.") {
			t.Errorf("greeting is not one line ending with the sandbox: %q", g)
		}
	}
}

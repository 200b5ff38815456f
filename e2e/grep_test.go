package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// TestGrep_says_what_it_could_not_read: a file the server's user cannot
// read is not searched, and the result says how many there were and
// names the first, as ripgrep does on stderr, instead of passing over
// them in silence.
func TestGrep_says_what_it_could_not_read(t *testing.T) {
	t.Parallel()
	users := sandboxenv.Users(t)
	if len(users) < 2 {
		t.Skip("needs root and setpriv to run the server as a user some files are closed to")
	}
	e := sandboxenv.New(t, binary, users[1])
	for name, mode := range map[string]os.FileMode{"open.txt": 0o644, "closed/a.txt": 0o000, "closed/b.txt": 0o000} {
		p := filepath.Join(e.Work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("needle\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	cs, _ := e.Serve(t, "landlock", nil)
	for _, mode := range []string{"files_with_matches", "content", "count"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "Grep", Arguments: map[string]any{"pattern": "needle", "output_mode": mode}})
		if err != nil {
			t.Fatal(err)
		}
		text := testbin.Text(t, res)
		if res.IsError || !strings.Contains(text, "open.txt") {
			t.Fatalf("%s: %s", mode, text)
		}
		if !strings.Contains(text, "2 files could not be read (the first: closed/a.txt: permission denied)") {
			t.Errorf("%s: the result does not say what could not be read:\n%s", mode, text)
		}
	}
}

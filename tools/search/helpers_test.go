package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/tools"
)

// newSession makes a session whose current directory is dir.
func newSession(t testing.TB, dir string) *tools.Session {
	t.Helper()
	return tooltest.NewSession(t, tools.SessionOptions{Cwd: dir})
}

// call runs a tool through the pipeline, as a client's call would run, and
// returns its text, or the error's message with ok false. A result over the
// tool's budget is read back whole from where the pipeline saved it, as a
// client reads the resource.
func call(t testing.TB, tool *tools.Tool, s *tools.Session, input string) (text string, out any, ok bool) {
	t.Helper()
	o := tooltest.RunWith(context.Background(), t, nil, tool, &tools.UseContext{Session: s}, input, nil)
	text = o.Result.Text
	if o.Persisted != nil {
		b, err := os.ReadFile(o.Persisted.Path)
		if err != nil {
			t.Fatal(err)
		}
		text = string(b)
	}
	return text, o.Result.Output, !o.Result.IsError
}

// writeTree creates files (path → content) under dir, giving them
// increasing modification times in map-independent order when mtimes is
// given (path → seconds after a fixed base).
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// setMtimes sets modification times: each path gets base + its seconds.
func setMtimes(t testing.TB, dir string, secs map[string]int) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for p, s := range secs {
		tm := base.Add(time.Duration(s) * time.Second)
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
}

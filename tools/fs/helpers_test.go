package fs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/tooltest"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// fileTools are the tools under test.
func fileTools() []*tools.Tool {
	return []*tools.Tool{fs.Read(), fs.Write(fs.Options{}), fs.Edit(fs.Options{}), fs.MultiEdit(fs.Options{}), fs.LS(), fs.NotebookEdit(fs.Options{})}
}

// harness runs calls through the orchestrator pipeline in one session
// whose current directory is a fresh temporary directory (a tooltest.Env).
// Its permission step is the pipeline's own with no rules
// (orchestrator.AllowUnlessDenied), so the tools' own confinement is what
// the tests see.
type harness struct {
	t   *testing.T
	e   *tooltest.Env
	dir string
	s   *tools.Session
	p   *orchestrator.Pipeline
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	e := tooltest.New(t, fileTools(), tooltest.Options{})
	return &harness{t: t, e: e, dir: e.Dir(), s: e.Session, p: e.Pipeline}
}

// on is h for the (sub)test t: its failures are t's. A parallel subtest
// uses its own, as a test may fail only from its own goroutine.
func (h *harness) on(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// env is the tooltest.Env calls run in: h's test, session and pipeline
// (a test may give h another session).
func (h *harness) env() *tooltest.Env {
	e := h.e.On(h.t)
	e.Pipeline, e.Session, e.UseContext.Session = h.p, h.s, h.s
	return e
}

// path is the absolute path of rel in the working directory.
func (h *harness) path(rel string) string { return filepath.Join(h.dir, rel) }

// put creates the file rel holding data (mode 0644), with parents.
func (h *harness) put(rel, data string) string {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// get returns the content of the file rel.
func (h *harness) get(rel string) string {
	h.t.Helper()
	b, err := os.ReadFile(h.path(rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

// call runs the tool with input (marshalled to JSON) through the pipeline.
func (h *harness) call(name string, input any) *tools.Result {
	h.t.Helper()
	return h.env().Call(name, input)
}

// ok runs a call that must succeed.
func (h *harness) ok(name string, input any) *tools.Result {
	h.t.Helper()
	return h.env().OK(name, input)
}

// fail runs a call that must fail with a message holding every want.
func (h *harness) fail(name string, input any, want ...string) string {
	h.t.Helper()
	return h.env().Fail(name, input, want...)
}

// read reads rel with the Read tool, recording it for the session.
func (h *harness) read(rel string) *tools.Result {
	h.t.Helper()
	return h.ok("Read", map[string]any{"file_path": h.path(rel)})
}

// contains fails the test unless s holds every want.
func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s %q does not contain %q", what, s, w)
		}
	}
}

// outputJSON is a result's output object as generic JSON.
func outputJSON(t *testing.T, res *tools.Result) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.Output)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

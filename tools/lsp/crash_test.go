package lsp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

// A server that dies at once never costs an edit: the edit applies, its
// result says the diagnostics were not checked and why, and the server is
// tried again on the next edit, after a backoff.
func TestBrokenServerDoesNotStopEdits(t *testing.T) {
	t.Parallel()
	broken := lsp.ServerConfig{Name: "broken", Command: "sh", Args: []string{"-c", "echo cannot start >&2; exit 3"},
		ExtensionToLanguage: map[string]string{".txt": "plaintext"}, Path: "/bin/sh", Source: "test"}
	svc := lsp.New(lsp.Options{Servers: []lsp.ServerConfig{broken}, DiagnosticsWait: 2 * time.Second})
	e := lspEnv(t, svc)
	put(t, e.Dir(), "f.txt", "one\n")
	e.OK("Read", map[string]any{"file_path": "f.txt"})
	for i, next := range []string{"two", "three", "four"} {
		prev := []string{"one", "two", "three"}[i]
		res := e.OK("Edit", map[string]any{"file_path": "f.txt", "old_string": prev, "new_string": next})
		if !strings.Contains(res.Text, "(Diagnostics not checked:") || !strings.Contains(res.Text, "sh") {
			t.Errorf("edit %d: %s", i, res.Text)
		}
	}
	st := svc.Status(e.Session)
	if len(st) != 1 || st[0].Starts < 2 || st[0].PID != 0 || !strings.Contains(st[0].LastError, "cannot start") {
		t.Errorf("status: %+v", st)
	}
}

package lsp_test

import (
	"os"
	"path/filepath"
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

// A server gets the environment Bash's commands get: what a build needs
// and what sandbox.env.allow names, without agent-mcp's own secrets or any
// other unnamed variable, and without BASH_ENV, which would run a file in
// the bash that starts it. (Not parallel: it sets the process's
// environment.)
func TestServerEnvironmentLacksSecrets(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "bash_env_ran")
	script := filepath.Join(dir, "bash_env.sh")
	if err := os.WriteFile(script, []byte("touch "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENT_MCP_TOKEN", "s3cret-token")
	t.Setenv("BASH_ENV", script)
	t.Setenv("GITHUB_TOKEN", "gh-token-0017")
	t.Setenv("HF_TOKEN", "hf-token-0017")
	t.Setenv("ALLOWED_BY_SETTINGS", "named-0017")
	t.Setenv("GOFLAGS", "-mod=mod")
	envFile := filepath.Join(dir, "env")
	dump := lsp.ServerConfig{Name: "dump", Command: "sh", Args: []string{"-c", "env > " + envFile + "; exit 3"},
		ExtensionToLanguage: map[string]string{".txt": "plaintext"}, Path: "/bin/sh", Source: "test"}
	svc := lsp.New(lsp.Options{Servers: []lsp.ServerConfig{dump}, DiagnosticsWait: time.Second,
		EnvAllow: []string{"ALLOWED_BY_*", "BASH_ENV"}})
	e := lspEnv(t, svc)
	put(t, e.Dir(), "f.txt", "one\n")
	e.OK("Read", map[string]any{"file_path": "f.txt"})
	e.OK("Edit", map[string]any{"file_path": "f.txt", "old_string": "one", "new_string": "two"})
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the server did not run: %v", err)
	}
	for _, secret := range []string{"s3cret-token", "BASH_ENV", "gh-token-0017", "hf-token-0017"} {
		if strings.Contains(string(env), secret) {
			t.Errorf("the server's environment holds %s:\n%s", secret, env)
		}
	}
	for _, want := range []string{"ALLOWED_BY_SETTINGS=named-0017", "GOFLAGS=-mod=mod", "PATH="} {
		if !strings.Contains(string(env), want) {
			t.Errorf("the server's environment lacks %s:\n%s", want, env)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("BASH_ENV ran in the bash that starts the server")
	}
}

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// TestLoad_mixed_calls_over_concurrent_sessions is the load run at a size
// fit for every CI run: every call answers correctly, every written file
// holds what was last written to it, and the server's memory stays small.
// The full-size run (50 × 200) is `go run ./bench/load`.
func TestLoad_mixed_calls_over_concurrent_sessions(t *testing.T) {
	tmp := t.TempDir()
	binary := filepath.Join(tmp, "agent-mcp")
	if err := testbin.Build(binary); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "tools").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"Read", "Grep", "Glob", "Bash", "Write"} {
		if !strings.Contains("\n"+string(out), "\n"+tool+" ") && !strings.Contains("\n"+string(out), "\n"+tool+"\n") {
			t.Fatalf("agent-mcp tools does not list %s:\n%s", tool, out)
		}
	}
	ws, err := makeWorkspace(tmp)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer(binary, ws, filepath.Join(tmp, "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	rep, err := runLoad(context.Background(), Config{URL: srv.url, Token: srv.token, Workspace: ws, Sessions: 8, Calls: 40, ServerPID: srv.cmd.Process.Pid})
	if rep != nil {
		t.Logf("\n%s", rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calls != 8*40 || rep.FilesChecked != 8*4 || rep.FilesBad != 0 {
		t.Fatalf("calls %d, files checked %d, wrong %d; want %d calls, %d files, none wrong", rep.Calls, rep.FilesChecked, rep.FilesBad, 8*40, 8*4)
	}
	if rep.PeakRSS > 512<<20 {
		t.Fatalf("server peak RSS %d MiB, want under 512 MiB", rep.PeakRSS>>20)
	}
}

// TestStartup_measures_each_server runs the startup measurement once:
// agent-mcp, a baseline binary (the same one here) and a stand-in for the
// reference server each answer initialize.
func TestStartup_measures_each_server(t *testing.T) {
	tmp := t.TempDir()
	binary := filepath.Join(tmp, "agent-mcp")
	if err := testbin.Build(binary); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(tmp, "fs-server")
	script := "#!/bin/sh\nread line\necho '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'\ncat >/dev/null\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := reportStartup(binary, binary, fake, 1, tmp); err != nil {
		t.Fatal(err)
	}
}

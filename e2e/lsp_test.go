package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// gopls, started for the first Go file an Edit touches, runs inside Bash's
// sandbox (its own PID namespace), still reports the edit's error, and
// ends with the server.
func TestLSP_gopls_runs_in_the_sandbox_and_ends_with_the_server(t *testing.T) {
	t.Parallel()
	path := goplsPath(t)
	e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
	goModule(t, e.Work)
	cs, cmd := e.Serve(t, "namespaces,landlock", []string{"PATH=" + path, "GOFLAGS=-mod=mod", "GOPROXY=off"},
		"--settings", `{"lspDiagnosticsWaitMs": 20000}`)
	call := toolCaller(t, cs)
	call("Read", map[string]any{"file_path": "main.go"})
	out := call("Edit", map[string]any{"file_path": "main.go", "old_string": "println(1)", "new_string": "println(notDefined)"})
	if !strings.Contains(out, "main.go:\n  ✘ [Line 4:10] undefined: notDefined") {
		t.Fatalf("no diagnostics from the sandboxed gopls:\n%s", out)
	}

	// The gopls of this server is the one whose cache is in its state
	// directory (set only for a sandboxed server).
	pid := goplsOf(t, e.State)
	if pid == 0 {
		t.Fatal("no gopls process with this server's cache directory")
	}
	mine, _ := os.Readlink("/proc/self/ns/pid")
	theirs, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil || theirs == mine {
		t.Errorf("gopls (pid %d) shares the server's PID namespace (%s, %v): not sandboxed", pid, theirs, err)
	}

	// The server's end ends it.
	if err := cs.Close(); err != nil {
		t.Log(err)
	}
	_ = cmd.Wait()
	testbin.WaitFor(t, "gopls (pid "+strconv.Itoa(pid)+") to end with the server", func() bool { return !alive(pid) })
}

// goplsOf finds the gopls process whose environment points its cache into
// stateDir; 0 when there is none.
func goplsOf(t *testing.T, stateDir string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		if strings.TrimSpace(string(comm)) != "gopls" {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if strings.Contains(string(env), "GOPLSCACHE="+stateDir) {
			return pid
		}
	}
	return 0
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting to be reaped counts as gone).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// `agent-mcp tools` and `agent-mcp sandbox check` list the language
// servers found on PATH, and say so when --lsp is off.
func TestLSP_tools_and_sandbox_check_list_the_servers_found(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	fake := filepath.Join(bin, "gopls")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Env = append(testbin.HermeticEnv(t), "PATH="+bin+":/usr/bin:/bin")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	dir := t.TempDir()
	want := "go: gopls serve (" + fake + ") for .go [default]"
	if out := run("tools", "--cwd", dir); !strings.Contains(out, "language servers:\n  "+want) {
		t.Errorf("tools does not list gopls:\n%s", out)
	}
	if out := run("tools", "--cwd", dir, "--lsp", "off"); !strings.Contains(out, "language servers: off (--lsp off)") {
		t.Errorf("tools with --lsp off:\n%s", out)
	}
	if out := run("sandbox", "check", "--cwd", dir); !strings.Contains(out, want) {
		t.Errorf("sandbox check does not list gopls:\n%s", out)
	}
	if out := run("tools", "--cwd", dir, "--lsp", "sometimes"); !strings.Contains(out, `--lsp "sometimes": want auto`) {
		t.Errorf("a bad --lsp:\n%s", out)
	}
}

// TestLSP_a_sandboxed_server_sees_the_tree_read_only: a language server
// lasts the session, so it runs in the sandbox with the working directory
// read-only (a server that writes there says so with writesWorkspace).
// While only it runs, a file the user makes under a protected name (an
// .envrc from a terminal of their own) stays the user's: before, the
// server counted as a running command and the next Bash call moved the
// user's file aside as a command's.
func TestLSP_a_sandboxed_server_sees_the_tree_read_only(t *testing.T) {
	t.Parallel()
	path := goplsPath(t)
	for _, writes := range []bool{false, true} {
		t.Run(fmt.Sprintf("writesWorkspace=%v", writes), func(t *testing.T) {
			t.Parallel()
			e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
			goModule(t, e.Work)
			server := map[string]any{"go": map[string]any{
				"command": "sh", "args": []string{"-c", "touch written-by-server 2>/dev/null; exec gopls serve"},
				"extensionToLanguage": map[string]string{".go": "go"}, "writesWorkspace": writes,
			}}
			settings, _ := json.Marshal(map[string]any{"lspDiagnosticsWaitMs": 20000, "lspServers": server})
			cs, _ := e.Serve(t, "namespaces,landlock", []string{"PATH=" + path, "GOFLAGS=-mod=mod", "GOPROXY=off"},
				"--settings", string(settings))
			call := toolCaller(t, cs)
			call("Read", map[string]any{"file_path": "main.go"})
			out := call("Edit", map[string]any{"file_path": "main.go", "old_string": "println(1)", "new_string": "println(notDefined)"})
			if !strings.Contains(out, "undefined: notDefined") {
				t.Fatalf("no diagnostics from the sandboxed gopls:\n%s", out)
			}
			_, err := os.Lstat(filepath.Join(e.Work, "written-by-server"))
			if wrote := err == nil; wrote != writes {
				t.Errorf("the server wrote in the working directory: %v, want %v", wrote, writes)
			}
			if writes {
				return
			}
			envrc := filepath.Join(e.Work, ".envrc")
			if err := os.WriteFile(envrc, []byte("export MINE=1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, _ := testbin.Bash(t, cs, "echo done", false); strings.Contains(out, "sandbox-refused") {
				t.Errorf("the user's .envrc was taken for a command's while only the language server ran:\n%s", out)
			}
			if data, err := os.ReadFile(envrc); err != nil || string(data) != "export MINE=1\n" {
				t.Errorf("the user's .envrc is gone or changed: %q, %v", data, err)
			}
		})
	}
}

// goplsPath is a PATH holding gopls and go, for a server that starts
// gopls in the sandbox; the test skips (fails in CI) without them.
func goplsPath(t *testing.T) string {
	t.Helper()
	gopls, err := exec.LookPath("gopls")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gopls is not on PATH in CI: .ci/run installs it")
		}
		t.Skip("gopls is not on PATH")
	}
	sandboxenv.RequireLayers(t, binary, "namespaces,landlock")
	gobin, err := sandboxenv.GoBinary()
	if err != nil {
		t.Skip(err)
	}
	return filepath.Dir(gopls) + ":" + filepath.Dir(gobin) + ":" + os.Getenv("PATH")
}

// goModule writes a one-file Go module into dir.
func goModule(t *testing.T, dir string) {
	t.Helper()
	for name, data := range map[string]string{
		"go.mod":  "module example.com/m\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {\n\tprintln(1)\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// toolCaller calls tools on cs ([call]), failing the test on an error
// result.
func toolCaller(t *testing.T, cs *mcp.ClientSession) func(name string, args map[string]any) string {
	return func(name string, args map[string]any) string {
		t.Helper()
		out, isErr := call(t, cs, name, args)
		if isErr {
			t.Fatalf("%s: %s", name, out)
		}
		return out
	}
}

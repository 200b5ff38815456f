package shell

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// startBackground starts command with run_in_background and returns its
// task id.
func startBackground(t *testing.T, s *tools.Session, command string) string {
	t.Helper()
	res := mustCall(t, Bash(testOpts), s, map[string]any{"command": command, "run_in_background": true})
	out := bashOut(t, res)
	if out.BackgroundTaskID == "" || out.OutputFile == "" || res.IsError {
		t.Fatalf("run_in_background: %+v", res)
	}
	if !strings.Contains(res.Text, out.BackgroundTaskID) || !strings.Contains(res.Text, out.OutputFile) {
		t.Errorf("text %q should name the task id and the output file", res.Text)
	}
	return out.BackgroundTaskID
}

func TestBackground_run_in_background(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	id := startBackground(t, s, `echo first; [ -t 1 ] && echo "on a terminal"; exit 4`)
	res := mustCall(t, TaskOutput(), s, map[string]any{"task_id": id})
	o := taskOut(t, res)
	if o.RetrievalStatus != RetrievalSuccess || o.Task.Status != StatusFailed || o.Task.ExitCode == nil || *o.Task.ExitCode != 4 {
		t.Errorf("TaskOutput = %+v, want success/failed/exit 4", o)
	}
	if o.Task.Output != "first\non a terminal" {
		t.Errorf("output = %q, want lines with \\n endings from a terminal", o.Task.Output)
	}
	for _, want := range []string{"<status>failed</status>", "<exit_code>4</exit_code>", "<output>\nfirst\non a terminal\n</output>", "<task_id>" + id + "</task_id>"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, res.Text)
		}
	}
	// The output file is readable directly as well.
	b, err := os.ReadFile(o.Task.OutputFile)
	if err != nil || string(b) != "first\non a terminal\n" {
		t.Errorf("output file: %q, %v", b, err)
	}
	// A finished task stays queryable; nothing new to report.
	res = mustCall(t, TaskOutput(), s, map[string]any{"task_id": id, "block": false})
	if o := taskOut(t, res); o.Task.Output != "" || o.Task.Status != StatusFailed || !strings.Contains(res.Text, "(no new output)") {
		t.Errorf("second TaskOutput = %+v\n%s", o, res.Text)
	}
}

func TestTaskOutput_increments_and_status(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	id := startBackground(t, s, `echo one; while [ ! -f go ]; do sleep 0.01; done; echo two`)
	var o TaskOutputOutput
	seen := ""
	testbin.WaitFor(t, "the first line", func() bool {
		o = taskOut(t, mustCall(t, TaskOutput(), s, map[string]any{"task_id": id, "block": false}))
		seen += o.Task.Output
		return strings.Contains(seen, "one")
	})
	if o.RetrievalStatus != RetrievalNotReady || o.Task.Status != StatusRunning || o.Task.ExitCode != nil {
		t.Errorf("running task: %+v", o)
	}
	// Blocking with a short timeout while it still runs.
	res := mustCall(t, TaskOutput(), s, map[string]any{"task_id": id, "timeout": 50})
	if o := taskOut(t, res); o.RetrievalStatus != RetrievalTimeout || o.Task.Status != StatusRunning || o.Task.Output != "" {
		t.Errorf("blocking timeout: %+v", o)
	}
	if !strings.Contains(res.Text, "still running") {
		t.Errorf("timeout text: %q", res.Text)
	}
	if err := os.WriteFile(filepath.Join(s.Cwd(), "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o = taskOut(t, mustCall(t, TaskOutput(), s, map[string]any{"task_id": id, "block": true, "timeout": 600000}))
	if o.RetrievalStatus != RetrievalSuccess || o.Task.Status != StatusCompleted || *o.Task.ExitCode != 0 || o.Task.Output != "two" {
		t.Errorf("finished task: %+v, want completed with only the new line", o)
	}
}

func TestTaskOutput_filter(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	id := startBackground(t, s, `printf 'apple 1\nbanana 2\napricot 3\n'`)
	o := taskOut(t, mustCall(t, TaskOutput(), s, map[string]any{"task_id": id, "filter": "^ap"}))
	if o.Task.Output != "apple 1\napricot 3" {
		t.Errorf("filtered output = %q", o.Task.Output)
	}
	// Filtered-out lines count as read.
	res := mustCall(t, TaskOutput(), s, map[string]any{"task_id": id, "filter": "banana"})
	if taskOut(t, res).Task.Output != "" || !strings.Contains(res.Text, "match the filter") {
		t.Errorf("second filtered read: %q", res.Text)
	}
}

func TestTaskOutput_bad_input(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown_task_none_exist", map[string]any{"task_id": "b0000000"}, `no background task "b0000000"`},
		{"empty_task_id", map[string]any{"task_id": " "}, "task_id is empty"},
		{"bad_filter", map[string]any{"task_id": "x", "filter": "a("}, "filter is not a valid regular expression"},
		{"timeout_out_of_range", map[string]any{"task_id": "x", "timeout": 600001}, `parameter "timeout" must be at most 600000, got 600001`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := failure(call(t, context.Background(), TaskOutput(), s, tt.args, nil))
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error = %q, want %q", msg, tt.want)
			}
		})
	}
	t.Run("unknown_task_lists_known_ones", func(t *testing.T) {
		id := startBackground(t, s, "true")
		msg := failure(call(t, context.Background(), TaskOutput(), s, map[string]any{"task_id": "nope"}, nil))
		if !strings.Contains(msg, id) {
			t.Errorf("error = %q, want the known task %s named", msg, id)
		}
	})
	t.Run("foreground_commands_are_not_tasks", func(t *testing.T) {
		res := mustCall(t, Bash(testOpts), s, map[string]any{"command": "echo hi"})
		if id := bashOut(t, res).BackgroundTaskID; id != "" {
			t.Errorf("a finished foreground command got task id %q", id)
		}
	})
}

func TestBash_timeout_moves_to_background(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	m := marker()
	res := mustCall(t, Bash(testOpts), s, map[string]any{
		"command": "echo started; sleep " + m + "; echo never",
		"timeout": 300,
	})
	out := bashOut(t, res)
	if res.IsError || out.BackgroundTaskID == "" || !out.Interrupted || out.ExitCode != nil {
		t.Fatalf("timed-out command: %+v %q", out, res.Text)
	}
	if !strings.Contains(res.Text, "300ms") || !strings.Contains(res.Text, out.BackgroundTaskID) || !strings.Contains(res.Text, out.OutputFile) {
		t.Errorf("text %q should give the timeout, the task id and the output file", res.Text)
	}
	waitProcs(t, m, 1) // still running
	// Output already shown is not repeated, later output is.
	o := taskOut(t, mustCall(t, TaskOutput(), s, map[string]any{"task_id": out.BackgroundTaskID, "block": false}))
	if o.Task.Status != StatusRunning || (strings.Contains(res.Text, "started") && strings.Contains(o.Task.Output, "started")) {
		t.Errorf("TaskOutput after timeout: %+v", o)
	}
	stop := mustCall(t, TaskStop(), s, map[string]any{"task_id": out.BackgroundTaskID})
	if !strings.Contains(stop.Text, out.BackgroundTaskID) {
		t.Errorf("TaskStop text %q", stop.Text)
	}
	waitProcs(t, m, 0)
	o = taskOut(t, mustCall(t, TaskOutput(), s, map[string]any{"task_id": out.BackgroundTaskID}))
	if o.Task.Status != StatusKilled || o.Task.ExitCode == nil {
		t.Errorf("stopped task: %+v, want killed with an exit code", o)
	}
}

func TestTaskStop(t *testing.T) {
	t.Parallel()
	t.Run("stops_the_whole_group", func(t *testing.T) {
		s := newSession(t)
		m := marker()
		id := startBackground(t, s, "sleep "+m+" & sleep "+m+" & wait")
		waitProcs(t, m, 2)
		res := mustCall(t, TaskStop(), s, map[string]any{"task_id": id})
		out := res.Output.(TaskStopOutput)
		if out.TaskID != id || out.ShellID != id || !strings.Contains(out.Command, "sleep") {
			t.Errorf("TaskStop output = %+v", out)
		}
		waitProcs(t, m, 0)
	})
	t.Run("term_ignored_then_killed", func(t *testing.T) {
		s := newSession(t)
		m := marker()
		id := startBackground(t, s, "trap '' TERM; sleep "+m+" & trap '' TERM; wait")
		waitProcs(t, m, 1)
		mustCall(t, TaskStop(), s, map[string]any{"task_id": id})
		waitProcs(t, m, 0)
	})
	t.Run("deprecated_shell_id", func(t *testing.T) {
		s := newSession(t)
		id := startBackground(t, s, "sleep "+marker())
		mustCall(t, TaskStop(), s, map[string]any{"shell_id": id})
		tk, _ := managerFor(s).Get(id)
		if st, _ := tk.Status(); st != StatusKilled {
			t.Errorf("status %q after stop by shell_id", st)
		}
	})
	t.Run("errors", func(t *testing.T) {
		s := newSession(t)
		done := startBackground(t, s, "true")
		mustCall(t, TaskOutput(), s, map[string]any{"task_id": done})
		for _, tt := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"no_id", map[string]any{}, "task_id is required"},
			{"ids_disagree", map[string]any{"task_id": "a", "shell_id": "b"}, "name different tasks"},
			{"unknown", map[string]any{"task_id": "b9999999"}, `no background task "b9999999"`},
			{"already_finished", map[string]any{"task_id": done}, "is not running (it is completed with exit code 0)"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				msg := failure(call(t, context.Background(), TaskStop(), s, tt.args, nil))
				if !strings.Contains(msg, tt.want) {
					t.Errorf("error = %q, want %q", msg, tt.want)
				}
			})
		}
	})
}

func TestAliases(t *testing.T) {
	t.Parallel()
	p := pipelineFor(t, testOpts)
	s := newSession(t)
	run := func(name, input string) *tools.Result {
		t.Helper()
		o := p.Run(context.Background(), &tools.UseContext{Session: s}, orchestrator.Call{ID: name, Name: name, Input: json.RawMessage(input)}, nil)
		if o.Err != nil {
			t.Fatalf("%s: %v", name, o.Err)
		}
		return o.Result
	}
	bg := run("Bash", `{"command":"sleep `+marker()+`","run_in_background":true}`)
	id := bashOut(t, bg).BackgroundTaskID
	for _, name := range []string{"TaskOutput", "BashOutput", "AgentOutput"} {
		res := run(name, `{"task_id":"`+id+`","block":false}`)
		if res.IsError || !strings.Contains(res.Text, "<status>running</status>") {
			t.Errorf("%s: %q", name, res.Text)
		}
	}
	res := run("KillShell", `{"shell_id":"`+id+`"}`)
	if res.IsError {
		t.Errorf("KillShell: %q", res.Text)
	}
	res = run("KillBash", `{"task_id":"`+id+`"}`)
	if !res.IsError || !strings.Contains(res.Text, "is not running") {
		t.Errorf("KillBash of a stopped task: %q", res.Text)
	}
}

func TestTaskIDs_count_background_tasks(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	mustCall(t, Bash(testOpts), s, map[string]any{"command": "echo foreground"})
	if id := startBackground(t, s, "true"); id != "bash_1" {
		t.Errorf("first background task id %q, want bash_1", id)
	}
	mustCall(t, Bash(testOpts), s, map[string]any{"command": "echo foreground"})
	m := marker()
	res := mustCall(t, Bash(testOpts), s, map[string]any{"command": "echo before; sleep " + m, "timeout": 100})
	out := bashOut(t, res)
	if out.BackgroundTaskID != "bash_2" || filepath.Base(out.OutputFile) != "bash_2.output" {
		t.Errorf("timed-out command became %q writing to %q, want bash_2 and bash_2.output", out.BackgroundTaskID, out.OutputFile)
	}
	waitProcs(t, m, 1)
	// The renamed file still receives the command's output.
	mustCall(t, TaskStop(), s, map[string]any{"task_id": "bash_2"})
	if b, err := os.ReadFile(out.OutputFile); err != nil || !strings.Contains(string(b), "before") {
		t.Errorf("output file after rename: %q, %v", b, err)
	}
	if id := startBackground(t, s, "true"); id != "bash_3" {
		t.Errorf("third background task id %q, want bash_3", id)
	}
}

// TestBackground_task_cap starts background tasks up to the session's cap:
// one more is refused with a message naming the cap and the way out, a
// command timing out at the cap is stopped instead of moved, and a task
// that ends makes room again.
func TestBackground_task_cap(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	opts := testOpts
	opts.MaxBackgroundTasks = 2
	bash := Bash(opts)
	m := marker()
	var ids []string
	for range 2 {
		res := mustCall(t, bash, s, map[string]any{"command": "sleep " + m, "run_in_background": true})
		ids = append(ids, bashOut(t, res).BackgroundTaskID)
	}
	waitProcs(t, m, 2)
	msg := failure(call(t, context.Background(), bash, s, map[string]any{"command": "sleep " + m, "run_in_background": true}, nil))
	if !strings.Contains(msg, "already has 2 background tasks running") || !strings.Contains(msg, "--max-background-tasks") || !strings.Contains(msg, "TaskStop") {
		t.Fatalf("a third background task: %q, want the cap error", msg)
	}
	res := call(t, context.Background(), bash, s, map[string]any{"command": "echo waiting; sleep " + m, "timeout": 300}, nil)
	if !res.IsError || !strings.Contains(res.Text, "timed out after 300ms and was stopped") || !strings.Contains(res.Text, "2 background tasks running") {
		t.Fatalf("a command timing out at the cap: %+v", res)
	}
	if bashOut(t, res).BackgroundTaskID != "" {
		t.Error("the timed-out command was moved to the background past the cap")
	}
	waitProcs(t, m, 2)

	mustCall(t, TaskStop(), s, map[string]any{"task_id": ids[0]})
	waitProcs(t, m, 1)
	res = mustCall(t, bash, s, map[string]any{"command": "sleep " + m, "run_in_background": true})
	if bashOut(t, res).BackgroundTaskID == "" {
		t.Fatalf("after a TaskStop the cap still refused: %+v", res)
	}
	waitProcs(t, m, 2)
}

// TestBackground_server_cap shares one Bash tool (one server) between two
// sessions whose own caps are far off: the server-wide cap refuses a
// background task in either session and stops a command timing out, with
// a message naming the flag, and a task ending anywhere makes room.
func TestBackground_server_cap(t *testing.T) {
	a, b := newSession(t), newSession(t)
	opts := testOpts
	opts.MaxServerBackgroundTasks = 2
	bash := Bash(opts)
	m := marker()
	bg := map[string]any{"command": "sleep " + m, "run_in_background": true}
	first := bashOut(t, mustCall(t, bash, a, bg)).BackgroundTaskID
	mustCall(t, bash, b, bg)
	waitProcs(t, m, 2)
	for name, s := range map[string]*tools.Session{"a": a, "b": b} {
		msg := failure(call(t, context.Background(), bash, s, bg, nil))
		if !strings.Contains(msg, "this server already has 2 background tasks running across its sessions") || !strings.Contains(msg, "--max-server-background-tasks") {
			t.Fatalf("session %s: a third background task: %q, want the server cap's error", name, msg)
		}
	}
	res := call(t, context.Background(), bash, b, map[string]any{"command": "sleep " + m, "timeout": 300}, nil)
	if !res.IsError || !strings.Contains(res.Text, "was stopped") || !strings.Contains(res.Text, "--max-server-background-tasks") {
		t.Fatalf("a command timing out at the server cap: %+v", res)
	}
	waitProcs(t, m, 2)

	mustCall(t, TaskStop(), a, map[string]any{"task_id": first})
	waitProcs(t, m, 1)
	res = mustCall(t, bash, b, bg)
	if bashOut(t, res).BackgroundTaskID == "" {
		t.Fatalf("after a TaskStop the server cap still refused: %+v", res)
	}
	waitProcs(t, m, 2)
}

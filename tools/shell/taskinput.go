package shell

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed taskinput.md
var taskInputDescription string

// TaskInput's limits (docs/tools.md §7).
const (
	// TaskInputDefaultTimeoutMS is how long TaskInput waits for the output
	// that follows the input when the call gives no timeout.
	TaskInputDefaultTimeoutMS = 5_000
	// TaskInputMaxChars bounds one input.
	TaskInputMaxChars = 65_536
	// taskInputQuiet is how long the output must stay quiet, once it has
	// started, for TaskInput to answer without a wait_for.
	taskInputQuiet = 400 * time.Millisecond
)

// TaskInputInput is TaskInput's input.
type TaskInputInput struct {
	TaskID  string   `json:"task_id" jsonschema:"The id of the background task to type into (started by Bash with run_in_background)"`
	Input   string   `json:"input" jsonschema:"What to type, exactly as given: end a line with \\n to press Enter; control characters are sent as they are (\\u0003 is Ctrl-C, \\u0004 is Ctrl-D at the start of a line)"`
	WaitFor string   `json:"wait_for,omitempty" jsonschema:"A regular expression (RE2 syntax) to wait for in the output that follows the input, such as the next prompt; without it the call returns once the output has been quiet for a moment"`
	Timeout *float64 `json:"timeout,omitempty"`

	// command is what the permission rules judge the call as running
	// (tools.CommandInput), found by Validate: the lines typed into a
	// shell, or the task's command line. opaque says why it cannot be
	// judged as a command line (tools.OpaqueCommandInput).
	command, opaque string
	// shell is set when the task runs a shell: judged is the judgement of
	// the lines, made when the typed state's count was gen.
	shell  bool
	judged typedJudgement
	gen    uint64
}

// CommandLine is what the input makes the task run (tools.CommandInput):
// the lines typed into a shell started with no script, judged as Bash
// command lines; for any other task its own command, since typing into a
// process is judged as running it, so a deny on Bash covers TaskInput and
// plan mode refuses it.
func (in *TaskInputInput) CommandLine() string { return in.command }

// CommandOpaque says why what is typed cannot be judged as a command line
// (tools.OpaqueCommandInput): it goes to an interpreter, an editor or a
// database client, or into a shell in a way its line editor or its
// history acts on.
func (in *TaskInputInput) CommandOpaque() string { return in.opaque }

// Paths reports no file of its own: what the typed input makes the task do
// is the task's, judged as its command line.
func (in *TaskInputInput) Paths(*tools.UseContext) []tools.PathAccess { return nil }

// TaskInputOutput is TaskInput's structured output.
type TaskInputOutput struct {
	// RetrievalStatus is "success" when wait_for matched, the output went
	// quiet or the task ended, and "timeout" when the time ran out first.
	RetrievalStatus string   `json:"retrieval_status"`
	Task            TaskInfo `json:"task"`
}

// TaskInput returns the TaskInput tool.
func TaskInput() *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "TaskInput",
		Description: taskInputDescription,
		SearchHint:  "type input into a running background process or REPL",
	}, tools.Handler[TaskInputInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Describe(s, map[string]string{
				"timeout": fmt.Sprintf("How long to wait for the output that follows, in milliseconds (at most %d)", BashMaxTimeoutMS),
			})
			tools.Prop(s, "task_id").MinLength = tools.Ptr(1)
			tools.Prop(s, "input").MinLength = tools.Ptr(1)
			tools.Prop(s, "input").MaxLength = tools.Ptr(TaskInputMaxChars)
			tools.Prop(s, "timeout").Minimum = tools.Ptr(1.0)
			tools.Prop(s, "timeout").Maximum = tools.Ptr(float64(BashMaxTimeoutMS))
			tools.Default(s, "timeout", TaskInputDefaultTimeoutMS)
		},
		Validate: validateTaskInput,
		Call:     runTaskInput,
	})
}

// validateTaskInput checks the input and finds the task, whose command
// the permission decision then judges.
func validateTaskInput(_ context.Context, in *TaskInputInput, uc *tools.UseContext) error {
	if strings.TrimSpace(in.TaskID) == "" {
		return errors.New("task_id is empty: give the id Bash reported for the background task")
	}
	if in.Input == "" {
		return errors.New(`input is empty: give what to type, such as "yes\n"`)
	}
	if _, err := timeoutOf(in.Timeout, TaskInputDefaultTimeoutMS, "timeout"); err != nil {
		return err
	}
	if in.WaitFor != "" {
		if _, err := parseCondition("wait_for", in.WaitFor); err != nil {
			return err
		}
	}
	if uc == nil || uc.Session == nil {
		return errors.New("TaskInput needs a session")
	}
	t, err := managerFor(uc.Session).lookup(in.TaskID)
	if err != nil {
		return err
	}
	if err := t.acceptsInput(); err != nil {
		return err
	}
	in.command, in.opaque, in.shell = t.Command, "", false
	switch reads, what := taskReads(t.Command); reads {
	case shellcmd.ReadsCode:
		in.opaque = fmt.Sprintf("what is typed into task %s goes to %q, which reads it as code or commands no analysis of a command line can see", t.ID, what)
	case shellcmd.ReadsShellLines:
		in.shell = true
		in.judged, in.gen = judgeTyped(&t.typed, in.Input)
		in.command = in.judged.line
		if in.judged.opaque != "" {
			in.opaque = fmt.Sprintf("what is typed into the shell of task %s cannot be judged as command lines: %s", t.ID, in.judged.opaque)
		}
	}
	return nil
}

// acceptsInput says why the task cannot take input, or nil.
func (t *Task) acceptsInput() error {
	if status, code := t.Status(); status != StatusRunning {
		return fmt.Errorf("task %s has ended (%s, exit code %d) and takes no input; start the program again with Bash (run_in_background) to talk to it", t.ID, status, code)
	}
	if t.term == nil && !hasTerminals {
		return fmt.Errorf("task %s has no terminal to type into: on Windows a background task runs with pipes, not a terminal, so it takes no input", t.ID)
	}
	if t.term == nil {
		return fmt.Errorf("task %s has no terminal to type into: it was started in the foreground and moved to the background when its timeout passed, reading no input; start the program with run_in_background to talk to it", t.ID)
	}
	return nil
}

func runTaskInput(ctx context.Context, in *TaskInputInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	if uc == nil || uc.Session == nil {
		return nil, errors.New("TaskInput needs a session")
	}
	t, err := managerFor(uc.Session).lookup(in.TaskID)
	if err != nil {
		return nil, err
	}
	if err := t.acceptsInput(); err != nil {
		return nil, err
	}
	timeout, err := timeoutOf(in.Timeout, TaskInputDefaultTimeoutMS, "timeout")
	if err != nil {
		return nil, err
	}
	var cond condition
	quiet := taskInputQuiet
	if in.WaitFor != "" {
		if cond, err = parseCondition("wait_for", in.WaitFor); err != nil {
			return nil, err
		}
		quiet = 0
	}
	// The wait looks at what follows the input: the output up to now is
	// not matched (a stale prompt must not answer for the next one).
	from, _ := t.out.size()
	if in.shell && !t.typed.typed(in.gen, in.judged) {
		return nil, fmt.Errorf("another input was typed into task %s while this one was judged; send it again", t.ID)
	}
	if err := t.write(ctx, in.Input, timeout); err != nil {
		return nil, err
	}
	outcome, err := t.await(ctx, cond, from, timeout, quiet)
	if err != nil {
		return nil, fmt.Errorf("stopped waiting for the output of task %s (it keeps running): %w", t.ID, err)
	}
	status, code := t.Status()
	output, truncated := t.readNew()
	info := TaskInfo{
		TaskID: t.ID, TaskType: taskType, Status: status, Command: t.Command, Description: t.Description,
		Output: trimOutput(output), OutputFile: t.OutputPath, OutputTruncated: truncated,
	}
	if status != StatusRunning {
		info.ExitCode = &code
	}
	retrieval := RetrievalSuccess
	if outcome == awaitTimeout {
		retrieval = RetrievalTimeout
	}
	return &tools.Result{
		Output: TaskInputOutput{RetrievalStatus: retrieval, Task: info},
		Text:   renderTaskInput(retrieval, info, in.WaitFor, timeout),
	}, nil
}

// write types s into the task's terminal, giving up after timeout when the
// program reads none of it and the terminal's buffer is full.
func (t *Task) write(ctx context.Context, s string, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() {
		_, err := t.term.WriteString(s)
		done <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			if status, _ := t.Status(); status != StatusRunning {
				return fmt.Errorf("task %s ended before its input could be written (%s)", t.ID, status)
			}
			return fmt.Errorf("writing to task %s's terminal: %w", t.ID, err)
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("task %s is not reading its input: its terminal's buffer stayed full for %s (the rest is written as it reads)", t.ID, formatDuration(timeout))
	case <-ctx.Done():
		return fmt.Errorf("stopped writing to task %s: %w", t.ID, context.Cause(ctx))
	}
}

// renderTaskInput writes the model-facing text, in TaskOutput's shape.
func renderTaskInput(retrieval string, info TaskInfo, waitFor string, timeout time.Duration) string {
	body := taskBody(retrieval, info, false)
	switch {
	case retrieval != RetrievalTimeout:
		return body
	case waitFor != "":
		return body + fmt.Sprintf("\n`%s` did not appear within %s; the task is still running: read more with TaskOutput, or type again with TaskInput.", waitFor, formatDuration(timeout))
	}
	return body + fmt.Sprintf("\nThe output did not settle within %s; the task is still running: read more with TaskOutput.", formatDuration(timeout))
}

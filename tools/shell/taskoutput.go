package shell

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed taskoutput.md
var taskOutputDescription string

// TaskOutput's limits (docs/tools.md §7).
const (
	// TaskOutputDefaultTimeoutMS is how long a blocking TaskOutput waits.
	TaskOutputDefaultTimeoutMS = 30_000
)

// Retrieval statuses of TaskOutput.
const (
	// RetrievalSuccess: the task finished, or was not waited for.
	RetrievalSuccess = "success"
	// RetrievalTimeout: the wait ended before the task did.
	RetrievalTimeout = "timeout"
	// RetrievalNotReady: a non-blocking look at a task still running.
	RetrievalNotReady = "not_ready"
)

// TaskOutputInput is TaskOutput's input.
type TaskOutputInput struct {
	TaskID  string   `json:"task_id" jsonschema:"The id of the background task (given by Bash when it started or moved the command to the background)"`
	Block   *bool    `json:"block,omitempty" jsonschema:"Wait for the task to finish (up to timeout) before answering"`
	Timeout *float64 `json:"timeout,omitempty"`
	Filter  string   `json:"filter,omitempty" jsonschema:"A regular expression (RE2 syntax); only output lines matching it are returned"`
}

// TaskOutputOutput is TaskOutput's structured output.
type TaskOutputOutput struct {
	RetrievalStatus string   `json:"retrieval_status"`
	Task            TaskInfo `json:"task"`
}

// TaskInfo describes a background task.
type TaskInfo struct {
	TaskID      string `json:"task_id"`
	TaskType    string `json:"task_type"`
	Status      string `json:"status"`
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
	// ExitCode is set once the task is not running.
	ExitCode *int `json:"exitCode,omitempty"`
	// Output is the output new since the previous TaskOutput of this task
	// (only matching lines when a filter was given).
	Output     string `json:"output"`
	OutputFile string `json:"outputFile"`
	// OutputTruncated is true when part of the new output was left out.
	OutputTruncated bool `json:"outputTruncated,omitempty"`
}

// taskType is the kind of every task Bash starts.
const taskType = "local_bash"

// TaskOutput returns the TaskOutput tool.
func TaskOutput() *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "TaskOutput",
		Aliases:     []string{"BashOutput", "AgentOutput"},
		Description: taskOutputDescription,
		SearchHint:  "output of a background command or task",
		Core:        true,
		// Reading a task's output moves the session's read position and
		// changes nothing else, so it is a read (allowed in plan mode) that
		// may run beside other reads; it is not idempotent.
		ReadOnly:        true,
		ConcurrencySafe: true,
	}, tools.Handler[TaskOutputInput]{
		Schema: func(s *jsonschema.Schema) {
			// The other descriptions are in the input's tags; this one
			// quotes a constant.
			tools.Describe(s, map[string]string{
				"timeout": fmt.Sprintf("How long to wait when blocking, in milliseconds (at most %d)", BashMaxTimeoutMS),
			})
			tools.Prop(s, "task_id").MinLength = tools.Ptr(1)
			tools.Prop(s, "timeout").Minimum = tools.Ptr(1.0)
			tools.Prop(s, "timeout").Maximum = tools.Ptr(float64(BashMaxTimeoutMS))
			tools.Default(s, "block", true)
			tools.Default(s, "timeout", TaskOutputDefaultTimeoutMS)
		},
		Validate: func(_ context.Context, in *TaskOutputInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.TaskID) == "" {
				return errors.New("task_id is empty: give the id Bash reported for the background task")
			}
			if _, err := timeoutOf(in.Timeout, TaskOutputDefaultTimeoutMS, "timeout"); err != nil {
				return err
			}
			if in.Filter != "" {
				if _, err := regexp.Compile(in.Filter); err != nil {
					return fmt.Errorf("filter is not a valid regular expression: %v", err)
				}
			}
			return nil
		},
		Call: runTaskOutput,
	})
}

func runTaskOutput(ctx context.Context, in *TaskOutputInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	if uc == nil || uc.Session == nil {
		return nil, errors.New("TaskOutput needs a session")
	}
	m := managerFor(uc.Session)
	t, err := m.lookup(in.TaskID)
	if err != nil {
		return nil, err
	}
	timeout, err := timeoutOf(in.Timeout, TaskOutputDefaultTimeoutMS, "timeout")
	if err != nil {
		return nil, err
	}
	var filter *regexp.Regexp
	if in.Filter != "" {
		if filter, err = regexp.Compile(in.Filter); err != nil {
			return nil, fmt.Errorf("filter is not a valid regular expression: %v", err)
		}
	}
	block := in.Block == nil || *in.Block
	retrieval := RetrievalSuccess
	if block {
		timer := time.NewTimer(timeout)
		select {
		case <-t.Done():
		case <-timer.C:
			retrieval = RetrievalTimeout
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("stopped waiting for task %s (it keeps running): %w", t.ID, context.Cause(ctx))
		}
		timer.Stop()
	}
	status, code := t.Status()
	if !block && status == StatusRunning {
		retrieval = RetrievalNotReady
	}
	output, truncated := t.readNew()
	if filter != nil {
		output = filterLines(output, filter)
	}
	output = trimOutput(output)
	info := TaskInfo{
		TaskID: t.ID, TaskType: taskType, Status: status, Command: t.Command, Description: t.Description,
		Output: output, OutputFile: t.OutputPath, OutputTruncated: truncated,
	}
	if status != StatusRunning {
		info.ExitCode = &code
	}
	return &tools.Result{
		Output: TaskOutputOutput{RetrievalStatus: retrieval, Task: info},
		Text:   renderTaskOutput(retrieval, info, filter != nil),
	}, nil
}

// renderTaskOutput writes the model-facing text: tagged fields, then the
// new output.
func renderTaskOutput(retrieval string, info TaskInfo, filtered bool) string {
	body := taskBody(retrieval, info, filtered)
	if retrieval == RetrievalTimeout {
		body += "\nThe task is still running; call TaskOutput again to keep waiting, or TaskStop to end it."
	}
	return body
}

// taskBody writes a task's tagged fields, then its new output.
func taskBody(retrieval string, info TaskInfo, filtered bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<retrieval_status>%s</retrieval_status>\n", retrieval)
	fmt.Fprintf(&b, "<task_id>%s</task_id>\n", info.TaskID)
	fmt.Fprintf(&b, "<task_type>%s</task_type>\n", info.TaskType)
	fmt.Fprintf(&b, "<status>%s</status>\n", info.Status)
	if info.ExitCode != nil {
		fmt.Fprintf(&b, "<exit_code>%d</exit_code>\n", *info.ExitCode)
	}
	switch {
	case info.Output != "":
		fmt.Fprintf(&b, "<output>\n%s\n</output>", info.Output)
	case filtered:
		b.WriteString("(no new output lines match the filter)")
	default:
		b.WriteString("(no new output)")
	}
	return b.String()
}

// lookup finds a visible task, with an error naming the known ones.
func (m *Manager) lookup(id string) (*Task, error) {
	if t, ok := m.Get(id); ok {
		return t, nil
	}
	known := m.ids()
	if len(known) == 0 {
		return nil, fmt.Errorf("no background task %q in this session (there are none; Bash starts one with run_in_background or when a command times out)", id)
	}
	return nil, fmt.Errorf("no background task %q in this session; known tasks: %s", id, strings.Join(known, ", "))
}

// readNew returns the output written since the previous call, bounded to
// the result window (its head and tail when longer), and whether anything
// was left out.
func (t *Task) readNew() (string, bool) {
	total, written := t.out.size()
	t.mu.Lock()
	from := t.readOffset
	t.readOffset = written
	t.mu.Unlock()
	n := written - from
	var text string
	truncated := false
	if n <= resultWindow {
		b, _ := t.out.readRange(from, n)
		text = string(b)
	} else {
		head, _ := t.out.readRange(from, resultWindow/2)
		tail, _ := t.out.readRange(written-resultWindow/2, resultWindow/2)
		text = fmt.Sprintf("%s\n\n[... %s omitted; see %s ...]\n\n%s",
			head, tools.FormatSize(n-int64(len(head))-int64(len(tail))), t.OutputPath, tail)
		truncated = true
	}
	if total > written {
		text += fmt.Sprintf("\n[the output file stopped growing at %s; %s of later output was dropped]",
			tools.FormatSize(written), tools.FormatSize(total-written))
		truncated = true
	}
	return text, truncated
}

// filterLines keeps the lines of s that re matches.
func filterLines(s string, re *regexp.Regexp) string {
	var b bytes.Buffer
	for line := range strings.Lines(s) {
		if re.MatchString(strings.TrimRight(line, "\r\n")) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// Paths reports that TaskOutput touches no file of the workspace: it reads
// the task's output file in the session's own state directory.
func (in *TaskOutputInput) Paths(*tools.UseContext) []tools.PathAccess { return nil }

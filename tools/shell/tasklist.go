package shell

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed tasklist.md
var taskListDescription string

// TaskListInput is TaskList's input: it takes no parameters.
type TaskListInput struct{}

// Paths reports that TaskList touches no file: it lists the session's
// tasks.
func (in *TaskListInput) Paths(*tools.UseContext) []tools.PathAccess { return nil }

// TaskListEntry is one task in TaskList's structured output.
type TaskListEntry struct {
	TaskID      string `json:"task_id"`
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	// ExitCode is set once the task is not running.
	ExitCode *int `json:"exitCode,omitempty"`
	// RunningMS is how long it has run, or ran, in milliseconds.
	RunningMS int64 `json:"running_ms"`
	// OutputBytes is how much it has printed.
	OutputBytes int64 `json:"output_bytes"`
	// Terminal is true when it takes input (TaskInput): a task started in
	// the background that is still running.
	Terminal   bool   `json:"terminal"`
	OutputFile string `json:"outputFile"`
}

// TaskListOutput is TaskList's structured output, newest task first.
type TaskListOutput struct {
	Tasks []TaskListEntry `json:"tasks"`
}

// TaskList returns the TaskList tool.
func TaskList() *tools.Tool {
	return tools.New(tools.Tool{
		Name:            "TaskList",
		Description:     taskListDescription,
		SearchHint:      "list background commands and tasks",
		ReadOnly:        true,
		Idempotent:      true,
		ConcurrencySafe: true,
	}, tools.Handler[TaskListInput]{
		Call: func(_ context.Context, _ *TaskListInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			if uc == nil || uc.Session == nil {
				return nil, errors.New("TaskList needs a session")
			}
			list := managerFor(uc.Session).list(time.Now())
			return &tools.Result{Output: TaskListOutput{Tasks: list}, Text: renderTaskList(list)}, nil
		},
	})
}

// list describes the visible tasks as of now, the newest started first
// (a command moved to the background by its timeout gets its id when it
// moves, so ids need not follow that order).
func (m *Manager) list(now time.Time) []TaskListEntry {
	m.mu.Lock()
	ts := slices.Clone(m.order)
	m.mu.Unlock()
	out := []TaskListEntry{}
	for _, t := range slices.Backward(ts) {
		t.mu.Lock()
		visible, status, code, ended, id := t.visible, t.status, t.exitCode, t.Ended, t.ID
		t.mu.Unlock()
		if !visible {
			continue
		}
		total, _ := t.out.size()
		e := TaskListEntry{
			TaskID: id, Command: t.Command, Description: t.Description, Status: status,
			OutputBytes: total, OutputFile: t.OutputPath,
			Terminal: t.term != nil && status == StatusRunning,
		}
		end := now
		if status != StatusRunning {
			e.ExitCode = &code
			end = ended
		}
		e.RunningMS = end.Sub(t.Started).Milliseconds()
		out = append(out, e)
	}
	return out
}

// renderTaskList writes one line per task: id, status, exit code, running
// time, output size, command.
func renderTaskList(list []TaskListEntry) string {
	if len(list) == 0 {
		return "No background tasks in this session. Bash starts one with run_in_background (or when a command outlives its timeout)."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d task(s), newest first:\n", len(list))
	for _, e := range list {
		status := e.Status
		if e.ExitCode != nil {
			status += fmt.Sprintf(" (exit code %d)", *e.ExitCode)
		}
		if e.Terminal {
			status += ", takes input"
		}
		cmd := e.Command
		if len(cmd) > 200 {
			cmd = truncateRunes(cmd, 200) + "…"
		}
		fmt.Fprintf(&b, "%s  %s  %s  %s output  %s\n", e.TaskID, status,
			formatDuration(time.Duration(e.RunningMS)*time.Millisecond), tools.FormatSize(e.OutputBytes), cmd)
	}
	return strings.TrimRight(b.String(), "\n")
}

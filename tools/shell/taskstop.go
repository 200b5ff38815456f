package shell

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed taskstop.md
var taskStopDescription string

// TaskStopInput is TaskStop's input. ShellID is the deprecated name of
// TaskID; one of them is required.
type TaskStopInput struct {
	TaskID  string `json:"task_id,omitempty" jsonschema:"The id of the background task to stop"`
	ShellID string `json:"shell_id,omitempty" jsonschema:"Deprecated: use task_id"`
}

// id returns the task id given under either name.
func (in *TaskStopInput) id() (string, error) {
	id, old := strings.TrimSpace(in.TaskID), strings.TrimSpace(in.ShellID)
	switch {
	case id == "" && old == "":
		return "", errors.New("task_id is required: give the id of the background task to stop")
	case id != "" && old != "" && id != old:
		return "", fmt.Errorf("task_id %q and shell_id %q name different tasks: give only task_id", id, old)
	case id == "":
		return old, nil
	}
	return id, nil
}

// TaskStopOutput is TaskStop's structured output.
type TaskStopOutput struct {
	Message  string `json:"message"`
	TaskID   string `json:"task_id"`
	TaskType string `json:"task_type"`
	Command  string `json:"command"`
	// ShellID repeats TaskID for clients of the old name.
	ShellID string `json:"shell_id"`
}

// TaskStop returns the TaskStop tool.
func TaskStop() *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "TaskStop",
		Aliases:     []string{"KillShell", "KillBash"},
		Description: taskStopDescription,
		SearchHint:  "stop a background command or task",
		Idempotent:  true,
	}, tools.Handler[TaskStopInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "shell_id").Deprecated = true
		},
		Validate: func(_ context.Context, in *TaskStopInput, _ *tools.UseContext) error {
			_, err := in.id()
			return err
		},
		Call: func(_ context.Context, in *TaskStopInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			if uc == nil || uc.Session == nil {
				return nil, errors.New("TaskStop needs a session")
			}
			id, err := in.id()
			if err != nil {
				return nil, err
			}
			m := managerFor(uc.Session)
			t, err := m.lookup(id)
			if err != nil {
				return nil, err
			}
			if !m.Stop(t) {
				status, code := t.Status()
				return nil, fmt.Errorf("task %s is not running (it is %s with exit code %d); there is nothing to stop", id, status, code)
			}
			msg := fmt.Sprintf("Stopped task %s (%s); all of its processes were ended.", t.ID, t.Command)
			return &tools.Result{
				Text:   msg,
				Output: TaskStopOutput{Message: msg, TaskID: t.ID, TaskType: taskType, Command: t.Command, ShellID: t.ID},
			}, nil
		},
	})
}

// Paths reports that TaskStop touches no file: it signals processes the
// session started.
func (in *TaskStopInput) Paths(*tools.UseContext) []tools.PathAccess { return nil }

package workflow

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed todowrite.md
var todoWriteDescription string

// TodoWriteInput is TodoWrite's input.
type TodoWriteInput struct {
	Todos []tools.Todo `json:"todos" jsonschema:"The complete, updated todo list"`
}

// TodoWriteOutput is TodoWrite's structured output: the list before and after.
type TodoWriteOutput struct {
	OldTodos []tools.Todo `json:"oldTodos"`
	NewTodos []tools.Todo `json:"newTodos"`
}

// todoStatuses are the valid item states, in display order.
var todoStatuses = []string{"pending", "in_progress", "completed"}

// TodoWrite returns the TodoWrite tool.
func TodoWrite() *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "TodoWrite",
		Description: todoWriteDescription,
		SearchHint:  "keep the task list of the session",
		Idempotent:  true,
		// Changing the session's list is a write, but a harmless one.
		NonDestructive: true,
	}, tools.Handler[TodoWriteInput]{
		Schema: func(s *jsonschema.Schema) {
			todos := tools.Prop(s, "todos")
			item := todos.Items
			tools.Prop(item, "content").MinLength = tools.Ptr(1)
			tools.Prop(item, "activeForm").MinLength = tools.Ptr(1)
			st := tools.Prop(item, "status")
			for _, v := range todoStatuses {
				st.Enum = append(st.Enum, v)
			}
		},
		Validate: func(_ context.Context, in *TodoWriteInput, _ *tools.UseContext) error {
			for i, t := range in.Todos {
				if strings.TrimSpace(t.Content) == "" {
					return fmt.Errorf("todos[%d].content must be a non-empty string", i)
				}
				if strings.TrimSpace(t.ActiveForm) == "" {
					return fmt.Errorf("todos[%d].activeForm must be a non-empty string", i)
				}
			}
			return nil
		},
		Call: func(_ context.Context, in *TodoWriteInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			todos := in.Todos
			if todos == nil {
				todos = []tools.Todo{}
			}
			old := uc.Session.SetTodos(todos)
			if old == nil {
				old = []tools.Todo{}
			}
			return &tools.Result{
				Output: TodoWriteOutput{OldTodos: old, NewTodos: todos},
				Text:   "The todo list was updated. Keep using it to track your progress, and carry on with the current task.",
			}, nil
		},
	})
}

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/server"
)

// The fixture tools of the suite's tasks scenarios (the Tasks extension,
// io.modelcontextprotocol/tasks): greet answers at once; the others
// become tasks at once for clients that accept them (taskPolicies).

// taskPolicies are the production defaults with the fixture tools added:
// each becomes a task at once, and failing_job only runs as one.
func taskPolicies() map[string]server.TaskPolicy {
	p := server.DefaultTaskTools()
	for _, name := range []string{"slow_compute", "protocol_error_job", "confirm_delete", "multi_input"} {
		p[name] = server.TaskPolicy{}
	}
	p["failing_job"] = server.TaskPolicy{Required: true}
	p["test_tool_with_task"] = server.TaskPolicy{Inline: 200 * time.Millisecond, Required: true, InputFirst: true}
	return p
}

// mountTasks registers the tasks scenarios' fixture tools.
func mountTasks(s *mcp.Server) {
	type greetIn struct {
		Name string `json:"name" jsonschema:"whom to greet"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets by name, at once"},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("Hello, %s!", in.Name)), nil, nil
		})
	type slowIn struct {
		Seconds float64 `json:"seconds" jsonschema:"how long to compute"`
		Label   string  `json:"label,omitempty" jsonschema:"a name for the computation"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow_compute", Description: "Sleeps the given seconds, then answers"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			if in.Seconds < 0 || in.Seconds > 3600 {
				return nil, nil, fmt.Errorf("seconds must be between 0 and 3600, got %v", in.Seconds)
			}
			select {
			case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return text(fmt.Sprintf("computed %s after %vs", in.Label, in.Seconds)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "failing_job", Description: "Fails with a tool error after a second"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return nil, nil, errors.New("the job failed, as failing_job always does")
		})
	s.AddTool(&mcp.Tool{Name: "protocol_error_job", Description: "Ends in a JSON-RPC error",
		InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "protocol_error_job: an internal error, as always"}
		})
	type deleteIn struct {
		Filename string `json:"filename" jsonschema:"the file to delete"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "confirm_delete", Description: "Asks for confirmation, then reports the deletion"},
		func(_ context.Context, req *mcp.CallToolRequest, in deleteIn) (*mcp.CallToolResult, any, error) {
			if r, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok {
				return text(fmt.Sprintf("confirm_delete %s: %s", in.Filename, r.Action)), nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"confirm": &mcp.ElicitParams{Message: "Delete " + in.Filename + "?", RequestedSchema: confirmSchema},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "multi_input", Description: "Asks two questions at once"},
		func(_ context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
			want := mcp.InputRequestMap{}
			for _, k := range []string{"name", "confirm"} {
				if _, ok := req.Params.InputResponses[k].(*mcp.ElicitResult); !ok {
					want[k] = &mcp.ElicitParams{Message: "Your " + k + "?", RequestedSchema: confirmSchema}
				}
			}
			if len(want) > 0 {
				return &mcp.CallToolResult{InputRequests: want}, nil, nil
			}
			return text("multi_input: both answered"), nil, nil
		})
	// test_tool_with_task asks for a name by multi round-trip, then works
	// on as a task (InputFirst in its policy) for a moment.
	mcp.AddTool(s, &mcp.Tool{Name: "test_tool_with_task", Description: "Asks for a name, then greets it as a task"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
			r, ok := req.Params.InputResponses["user_name"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					"user_name": &mcp.ElicitParams{Message: "Your name?", RequestedSchema: confirmSchema},
				}}, nil, nil
			}
			select {
			case <-time.After(500 * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return text(fmt.Sprintf("Hello, %v!", r.Content["name"])), nil, nil
		})
}

var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":    map[string]any{"type": "string"},
		"confirm": map[string]any{"type": "boolean"},
	},
}

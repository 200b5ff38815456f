package workflow

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed agent.md
var agentDescription string

// AgentToolName is the Agent tool's name; the server hides it from clients
// that cannot run sub-agents (no MCP sampling).
const AgentToolName = "Agent"

// SubAgentType is a kind of sub-agent the Agent tool can start.
type SubAgentType struct {
	Name string
	// ReadOnly sub-agents get only read-only tools.
	ReadOnly bool
	// System is the sub-agent's system prompt.
	System string
}

// The sub-agent types, in the order the schema lists them.
var subAgentTypes = []SubAgentType{
	{
		Name: "general-purpose",
		System: "You are a sub-agent working on one task for another agent, with the tools you are given. " +
			"Do the task completely: search, read and change what it needs, and check your work. " +
			"When you are done, answer with a final report the other agent can act on: what you found or did, " +
			"the files involved (absolute paths), and anything left open. The report is all it sees of your work.",
	},
	{
		Name: "Explore", ReadOnly: true,
		System: "You are a sub-agent that explores a code base for another agent, using read-only tools. " +
			"Find what the task asks for quickly: search broadly first, then read the relevant parts. " +
			"Answer with a concise report: the answer, the files and line numbers that show it (absolute paths), and what you could not find.",
	},
	{
		Name: "Plan", ReadOnly: true,
		System: "You are a sub-agent that designs an implementation plan for another agent, using read-only tools. " +
			"Study the relevant code, then answer with a step-by-step plan: the files to change (absolute paths), " +
			"what to change in each, the order, the risks, and how to check the result.",
	},
}

func subAgentType(name string) (SubAgentType, bool) {
	for _, t := range subAgentTypes {
		if t.Name == name {
			return t, true
		}
	}
	return SubAgentType{}, false
}

// AgentInput is the Agent tool's input.
type AgentInput struct {
	Description  string `json:"description" jsonschema:"A short (3 to 5 word) title of the task"`
	Prompt       string `json:"prompt" jsonschema:"The task for the sub-agent, with everything it needs to know: it sees nothing of this conversation"`
	SubagentType string `json:"subagent_type,omitempty" jsonschema:"The kind of sub-agent: general-purpose (default; all tools), Explore (read-only; finds things in the code base) or Plan (read-only; designs an implementation plan)"`
}

func (in *AgentInput) kind() SubAgentType {
	t, ok := subAgentType(in.SubagentType)
	if !ok {
		t = subAgentTypes[0]
	}
	return t
}

// AgentOutput is the Agent tool's structured output.
type AgentOutput struct {
	Status       string `json:"status"`
	Description  string `json:"description"`
	SubagentType string `json:"subagent_type"`
	// Content is the sub-agent's final answer.
	Content    string `json:"content"`
	DurationMs int64  `json:"durationMs"`
}

// AgentOptions configure the Agent tool.
type AgentOptions struct {
	// MaxTurns bounds each sub-agent's model calls; 0 leaves it to the runner.
	MaxTurns int
}

// Agent returns the Agent tool (alias Task): it runs a sub-agent with its
// own conversation through the call's SubAgentRunner and returns the
// sub-agent's final answer.
func Agent(opts AgentOptions) *tools.Tool {
	names := make([]any, len(subAgentTypes))
	for i, t := range subAgentTypes {
		names[i] = t.Name
	}
	return tools.New(tools.Tool{
		Name:        AgentToolName,
		Aliases:     []string{"Task"},
		Description: agentDescription,
		SearchHint:  "hand a task to a sub-agent",
		// Read-only sub-agents change nothing; a general-purpose one may,
		// but each of its calls is decided by the permission rules in the
		// session's mode on its own.
		NonDestructive:     true,
		ConcurrencySafe:    true,
		ActsOnConversation: true,
		NeedsModel:         true,
	}, tools.Handler[AgentInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "description").MinLength = tools.Ptr(1)
			tools.Prop(s, "prompt").MinLength = tools.Ptr(1)
			st := tools.Prop(s, "subagent_type")
			st.Enum = names
			tools.Default(s, "subagent_type", subAgentTypes[0].Name)
		},
		// The Explore and Plan sub-agents are read-only.
		ReadOnly: func(in *AgentInput) bool { return in.kind().ReadOnly },
		Validate: func(_ context.Context, in *AgentInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.Prompt) == "" {
				return errors.New("prompt must describe the sub-agent's task")
			}
			if strings.TrimSpace(in.Description) == "" {
				return errors.New("description must be a short title of the task")
			}
			if in.SubagentType != "" {
				if _, ok := subAgentType(in.SubagentType); !ok {
					return fmt.Errorf("subagent_type %q is not known; use one of %s", in.SubagentType, strings.Join(subAgentTypeNames(), ", "))
				}
			}
			return nil
		},
		Call: func(ctx context.Context, in *AgentInput, uc *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
			if uc.SubAgents == nil {
				return nil, errors.New("no model is available to run a sub-agent: in `agent-mcp serve` the client must support MCP sampling. Do the task yourself instead")
			}
			kind := in.kind()
			start := time.Now()
			progress(tools.ProgressUpdate{Message: "Sub-agent started: " + in.Description})
			answer, err := uc.SubAgents.RunSubAgent(ctx, tools.SubAgentRequest{
				Description:  in.Description,
				Prompt:       in.Prompt,
				SystemPrompt: kind.System,
				Type:         kind.Name,
				Tools:        nil,
				ReadOnly:     kind.ReadOnly,
				MaxTurns:     opts.MaxTurns,
				Parent:       uc,
				Progress:     progress,
			})
			if err != nil {
				return nil, fmt.Errorf("the sub-agent (%s) failed: %w", in.Description, err)
			}
			answer = strings.TrimSpace(answer)
			if answer == "" {
				answer = "(The sub-agent finished without a final answer.)"
			}
			return &tools.Result{
				Output: AgentOutput{
					Status: "completed", Description: in.Description, SubagentType: kind.Name,
					Content: answer, DurationMs: time.Since(start).Milliseconds(),
				},
				Text: answer,
			}, nil
		},
	})
}

func subAgentTypeNames() []string {
	var out []string
	for _, t := range subAgentTypes {
		out = append(out, t.Name)
	}
	return out
}

package tools

import "context"

// SubAgentRunner runs a sub-agent: a model loop with its own conversation
// that works on one task with a subset of the tools and returns its final
// answer. The Agent tool calls it; chat provides one driving its own model,
// and the server provides one driving the client's model through MCP
// sampling. A UseContext without one cannot run sub-agents.
type SubAgentRunner interface {
	// RunSubAgent runs the task in req to its end (a final answer, the turn
	// limit, or ctx's cancellation) and returns the sub-agent's last text.
	RunSubAgent(ctx context.Context, req SubAgentRequest) (string, error)
}

// SubAgentRequest describes one sub-agent run.
type SubAgentRequest struct {
	// Description is the task's short (3 to 5 word) title, for progress and logs.
	Description string
	// Prompt is the task, the sub-agent's first user message.
	Prompt string
	// SystemPrompt frames the sub-agent (its role and how to answer).
	SystemPrompt string
	// Type names the kind of sub-agent asked for (e.g. "general-purpose").
	Type string
	// Tools are the names of the tools the sub-agent may call; nil means
	// every tool of the parent's pool. A runner never offers the Agent tool
	// itself, so sub-agents cannot nest.
	Tools []string
	// ReadOnly restricts the sub-agent to tools whose calls are read-only.
	ReadOnly bool
	// MaxTurns bounds the model calls; 0 means the runner's default.
	MaxTurns int
	// Parent is the calling tool's context: the sub-agent's tool calls run
	// in the same session and ask the same user.
	Parent *UseContext
	// Progress receives a report per sub-agent turn and tool call; may be nil.
	Progress Progress
}

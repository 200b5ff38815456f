package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/providers"
	"github.com/agent-mcp/agent-mcp/orchestrator/subagent"
)

// SubAgentModel drives sub-agents with chat's own provider: it implements
// subagent.Model, so a subagent.Runner on it is the tools.SubAgentRunner
// chat puts in every call's UseContext for the Agent tool.
type SubAgentModel struct {
	Provider providers.Provider
	Model    string
}

// Complete makes one (streamed, collected) model call for a sub-agent.
func (m *SubAgentModel) Complete(ctx context.Context, req subagent.Request) (*subagent.Response, error) {
	preq := providers.Request{Model: m.Model, System: req.System, MaxTokens: req.MaxTokens}
	for _, t := range req.Tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, err
		}
		preq.Tools = append(preq.Tools, providers.Tool{Name: t.Name, Description: t.Description, Schema: schema})
	}
	for _, msg := range req.Messages {
		pm := providers.Message{Role: providers.Role(msg.Role)}
		for _, b := range msg.Blocks {
			switch b.Kind {
			case subagent.Text:
				pm.Content = append(pm.Content, providers.Text(b.Text))
			case subagent.ToolUse:
				pm.Content = append(pm.Content, providers.Block{Type: providers.ToolUseBlock, ID: b.ID, Name: b.Name, Input: b.Input})
			case subagent.ToolResult:
				pm.Content = append(pm.Content, providers.Block{Type: providers.ToolResultBlock, ToolUseID: b.ID,
					IsError: b.IsError, Content: []providers.Block{providers.Text(b.Text)}})
			}
		}
		preq.Messages = append(preq.Messages, pm)
	}
	resp, err := m.Provider.Stream(ctx, preq, providers.Handler{})
	if err != nil {
		return nil, err
	}
	out := &subagent.Response{StopReason: map[providers.StopReason]string{
		providers.StopEndTurn: "endTurn", providers.StopToolUse: "toolUse", providers.StopMaxTokens: "maxTokens",
		providers.StopSequence: "stopSequence", providers.StopRefusal: "refusal",
	}[resp.Stop]}
	for _, b := range resp.Message.Content {
		switch b.Type {
		case providers.TextBlock:
			out.Blocks = append(out.Blocks, subagent.Block{Kind: subagent.Text, Text: b.Text})
		case providers.ToolUseBlock:
			out.Blocks = append(out.Blocks, subagent.Block{Kind: subagent.ToolUse, ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	return out, nil
}

// NewSubAgentRunner returns the sub-agent runner for chat: sub-agents run
// on provider's model over pipeline's pool (narrowed per request by the
// runner), with pipeline's permission rules and hooks.
func NewSubAgentRunner(provider providers.Provider, model string, pipeline *orchestrator.Pipeline, maxTokens int) (*subagent.Runner, error) {
	if provider == nil || pipeline == nil {
		return nil, errors.New("sub-agents need a provider and a pipeline")
	}
	return &subagent.Runner{Pipeline: pipeline, Model: &SubAgentModel{Provider: provider, Model: model}, MaxTokens: maxTokens}, nil
}

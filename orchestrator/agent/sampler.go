package agent

import (
	"context"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// Sampler lets tools (WebFetch's prompt) ask chat's model for a
// completion; it implements tools.Sampler.
type Sampler struct {
	Model llm.Model
}

// Sample sends system and one user message and returns the text answer.
func (s *Sampler) Sample(ctx context.Context, system, user string, maxTokens int) (string, error) {
	resp, err := s.Model.Stream(ctx, llm.Request{
		System: system, MaxTokens: maxTokens,
		Messages: []llm.Message{{Role: llm.User, Content: []llm.Block{llm.Text(user)}}},
	}, llm.Handler{})
	if err != nil {
		return "", err
	}
	return resp.Message.TextOf(), nil
}

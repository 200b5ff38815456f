package agent

import (
	"context"

	"github.com/agent-mcp/agent-mcp/orchestrator/providers"
)

// Sampler lets tools (WebFetch's prompt) ask chat's model for a
// completion; it implements tools.Sampler.
type Sampler struct {
	Provider providers.Provider
	Model    string
}

// Sample sends system and one user message and returns the text answer.
func (s *Sampler) Sample(ctx context.Context, system, user string, maxTokens int) (string, error) {
	resp, err := s.Provider.Stream(ctx, providers.Request{
		Model: s.Model, System: system, MaxTokens: maxTokens,
		Messages: []providers.Message{{Role: providers.User, Content: []providers.Block{providers.Text(user)}}},
	}, providers.Handler{})
	if err != nil {
		return "", err
	}
	return resp.Message.TextOf(), nil
}

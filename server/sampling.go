// MCP sampling is deprecated by SEP-2577 (protocol version 2026-07-28): a
// server should call a model provider itself. agent-mcp's server has no model
// of its own, so sampling is still how the host's model applies WebFetch's
// prompt and drives the Agent tool's sub-agents, for clients that offer it;
// it stays during the deprecation window (at least twelve months), and newer
// clients get the same requests as input-required results (roundtrip.go).
// What replaces it is chat, which calls providers directly
// (internal/providers). Every use of the deprecated API is in this file.
//
//lint:file-ignore SA1019 MCP sampling is kept on purpose during SEP-2577's deprecation window; see above

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/tools"
)

// addSampling gives a call the client's model when the client declared
// sampling: WebFetch's prompt and the Agent tool's sub-agents use it.
func (s *Server) addSampling(uc *tools.UseContext, ss *mcp.ServerSession, caps *mcp.ClientCapabilities) {
	if caps.Sampling != nil {
		uc.Sampler = sampler{ss}
		uc.SubAgents = s.subAgents(ss, caps.Sampling)
	}
}

// subAgents returns the sub-agent runner for a session whose client
// declared sampling: the client's model drives the sub-agent through
// sampling/createMessage, with tools when the client supports tool use in
// sampling and without otherwise.
func (s *Server) subAgents(ss *mcp.ServerSession, caps *mcp.SamplingCapabilities) tools.SubAgentRunner {
	return &agent.SubAgents{
		Pipeline: s.cfg.Pipeline,
		Model:    samplingModel{ss},
		NoTools:  caps.Tools == nil,
	}
}

// hideUnavailableTools removes from tools/list the tools this session's
// client cannot use: those that need a model (tools.Tool.NeedsModel) when
// the client offers none through sampling. (A tool's Disabled is fixed and
// cannot see the session, so tools/list is filtered per session instead.)
func (s *Server) hideUnavailableTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		ss, ok2 := req.GetSession().(*mcp.ServerSession)
		if !ok || !ok2 || clientSamples(ss) {
			return res, err
		}
		kept := make([]*mcp.Tool, 0, len(list.Tools))
		for _, t := range list.Tools {
			if pt, found := s.cfg.Pipeline.Pool.Find(t.Name); !found || !pt.NeedsModel {
				kept = append(kept, t)
			}
		}
		filtered := *list
		filtered.Tools = kept
		return &filtered, nil
	}
}

func clientSamples(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Sampling != nil
}

// samplingModel is an llm.Model answered by the client's model through MCP
// sampling with tools. It cannot stream: the handler hears nothing, and the
// agent takes the tool calls from the finished response.
type samplingModel struct{ ss *mcp.ServerSession }

func (m samplingModel) Stream(ctx context.Context, req llm.Request, _ llm.Handler) (*llm.Response, error) {
	params := &mcp.CreateMessageWithToolsParams{
		SystemPrompt: req.System,
		MaxTokens:    int64(req.MaxTokens),
	}
	for _, msg := range req.Messages {
		sm := &mcp.SamplingMessageV2{Role: mcp.Role(msg.Role)}
		for _, b := range msg.Content {
			c, err := toSamplingContent(b)
			if err != nil {
				return nil, err
			}
			sm.Content = append(sm.Content, c)
		}
		if len(sm.Content) == 0 {
			sm.Content = []mcp.Content{&mcp.TextContent{Text: ""}}
		}
		params.Messages = append(params.Messages, sm)
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema})
	}
	if len(params.Tools) > 0 {
		params.ToolChoice = &mcp.ToolChoice{Mode: "auto"}
	}
	res, handled, err := sampleRoundTrip(ctx, params)
	if !handled {
		res, err = m.ss.CreateMessageWithTools(ctx, params)
	}
	if err != nil {
		return nil, fmt.Errorf("sampling the client's model: %w", err)
	}
	out := &llm.Response{Message: llm.Message{Role: llm.Assistant}, Stop: stopReasons[res.StopReason]}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Message.Content = append(out.Message.Content, llm.Text(c.Text))
		case *mcp.ToolUseContent:
			input, err := json.Marshal(c.Input)
			if err != nil {
				return nil, fmt.Errorf("the client's model called %s with input that is not JSON: %w", c.Name, err)
			}
			if c.Input == nil {
				input = json.RawMessage("{}")
			}
			out.Message.Content = append(out.Message.Content, llm.Block{Type: llm.ToolUseBlock, ID: c.ID, Name: c.Name, Input: input})
		default:
			// Images or audio from the model carry nothing a sub-agent's
			// final report can use; they are skipped.
		}
	}
	if out.Stop == "" {
		out.Stop = llm.StopEndTurn
		if len(out.Message.ToolUses()) > 0 {
			out.Stop = llm.StopToolUse
		}
	}
	return out, nil
}

// stopReasons maps MCP sampling's stop reasons onto the llm vocabulary.
var stopReasons = map[string]llm.StopReason{
	"endTurn": llm.StopEndTurn, "toolUse": llm.StopToolUse, "maxTokens": llm.StopMaxTokens,
	"stopSequence": llm.StopSequence, "refusal": llm.StopRefusal,
}

func toSamplingContent(b llm.Block) (mcp.Content, error) {
	switch b.Type {
	case llm.ToolUseBlock:
		var input map[string]any
		if len(b.Input) > 0 {
			if err := json.Unmarshal(b.Input, &input); err != nil {
				return nil, fmt.Errorf("tool use %s: input is not a JSON object: %w", b.ID, err)
			}
		}
		return &mcp.ToolUseContent{ID: b.ID, Name: b.Name, Input: input}, nil
	case llm.ToolResultBlock:
		tr := &mcp.ToolResultContent{ToolUseID: b.ToolUseID, IsError: b.IsError}
		for _, c := range b.Content {
			rc, err := toSamplingContent(c)
			if err != nil {
				return nil, err
			}
			tr.Content = append(tr.Content, rc)
		}
		return tr, nil
	case llm.ImageBlock:
		return &mcp.ImageContent{MIMEType: b.MIMEType, Data: b.Data}, nil
	default:
		return &mcp.TextContent{Text: b.Text}, nil
	}
}

// sampler asks the client's model through MCP sampling.
type sampler struct{ ss *mcp.ServerSession }

func (m sampler) Sample(ctx context.Context, system, user string, maxTokens int) (string, error) {
	if text, handled, err := sampleTextRoundTrip(ctx, system, user, maxTokens); handled {
		return text, err
	}
	res, err := m.ss.CreateMessage(ctx, &mcp.CreateMessageParams{
		SystemPrompt: system,
		MaxTokens:    int64(maxTokens),
		Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: user}}},
	})
	if err != nil {
		return "", fmt.Errorf("sampling the client's model: %w", err)
	}
	if t, ok := res.Content.(*mcp.TextContent); ok {
		return t.Text, nil
	}
	return "", fmt.Errorf("the client's model answered with %T, not text", res.Content)
}

// sampleRoundTrip samples through the round trips when the call runs
// across them.
func sampleRoundTrip(ctx context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, bool, error) {
	resp, handled, err := viaRoundTrip(ctx, params)
	if !handled || err != nil {
		return nil, handled, err
	}
	switch res := resp.(type) {
	case *mcp.CreateMessageWithToolsResult:
		return res, true, nil
	case *mcp.CreateMessageResult:
		return &mcp.CreateMessageWithToolsResult{Content: []mcp.Content{res.Content}, Model: res.Model, Role: res.Role, StopReason: res.StopReason}, true, nil
	}
	return nil, true, errors.New("the client answered a sampling request with something else")
}

// sampleTextRoundTrip is sampler.Sample through the round trips, when the
// call runs across them.
func sampleTextRoundTrip(ctx context.Context, system, user string, maxTokens int) (string, bool, error) {
	res, handled, err := sampleRoundTrip(ctx, &mcp.CreateMessageWithToolsParams{
		SystemPrompt: system,
		MaxTokens:    int64(maxTokens),
		Messages:     []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: user}}}},
	})
	if !handled {
		return "", false, nil
	}
	if err != nil {
		return "", true, fmt.Errorf("sampling the client's model: %w", err)
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, true, nil
		}
	}
	return "", true, errors.New("the client's model answered without text")
}

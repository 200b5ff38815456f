package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/tools"
)

// needsSampling names the tools a session is shown only when its client
// supports MCP sampling: without the client's model they cannot work.
// (The Agent tool's IsEnabled cannot see the session, so the server
// filters tools/list per session instead.)
var needsSampling = map[string]bool{"Agent": true}

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
// client cannot use (see needsSampling).
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
			if !needsSampling[t.Name] {
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

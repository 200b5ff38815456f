package providers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// anthropicProvider speaks the Anthropic Messages API.
type anthropicProvider struct {
	client anthropic.Client
	model  string
	base   string
}

// DefaultMaxTokens is the output budget of a call when none is configured
// (the Messages API requires one).
const DefaultMaxTokens = 16384

func newAnthropic(model, base, key string, opts Options) *anthropicProvider {
	if key == "" {
		// A local endpoint that needs no key: the SDK still wants a
		// credential, so give it a placeholder.
		key = "no-key"
	}
	ro := []option.RequestOption{option.WithBaseURL(base), option.WithAPIKey(key)}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	// Retries are made by the retrying wrapper (retry.go), which reports them.
	ro = append(ro, option.WithMaxRetries(0))
	return &anthropicProvider{client: anthropic.NewClient(ro...), model: model, base: base}
}

// params maps an llm.Request onto the Messages API. Prompt caching: a
// breakpoint on each tool that asks for one (the last built-in tool and the
// last MCP tool) and one on the last block of the last message, so each
// turn reuses the previous turn's prefix.
func (p *anthropicProvider) params(req llm.Request) (anthropic.MessageNewParams, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	if b := req.ThinkingBudget; b > 0 && maxTokens <= b {
		// The budget is part of the output: leave room for the answer.
		maxTokens = b + DefaultMaxTokens/4
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: int64(maxTokens),
	}
	if req.ThinkingBudget > 0 {
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(max(req.ThinkingBudget, MinThinkingBudget)))
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		var extra map[string]any
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return params, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		_ = json.Unmarshal(t.Schema, &extra)
		delete(extra, "type")
		delete(extra, "properties")
		delete(extra, "required")
		tp := &anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required, ExtraFields: extra},
		}
		if schema.Properties == nil {
			tp.InputSchema.Properties = map[string]any{}
		}
		if t.CacheBreakpoint {
			tp.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	for i, m := range req.Messages {
		blocks := make([]anthropic.ContentBlockParamUnion, 0, len(m.Content))
		for _, b := range m.Content {
			blocks = append(blocks, anthropicBlock(b))
		}
		if i == len(req.Messages)-1 && len(blocks) > 0 {
			setCacheControl(&blocks[len(blocks)-1])
		}
		if m.Role == llm.Assistant {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	return params, nil
}

// MinThinkingBudget is the least thinking budget the API takes.
const MinThinkingBudget = 1024

func anthropicBlock(b llm.Block) anthropic.ContentBlockParamUnion {
	switch b.Type {
	case llm.ThinkingBlock:
		return anthropic.NewThinkingBlock(b.Signature, b.Text)
	case llm.RedactedThinkingBlock:
		return anthropic.NewRedactedThinkingBlock(string(b.Data))
	case llm.ToolUseBlock:
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		return anthropic.NewToolUseBlock(b.ID, input, b.Name)
	case llm.ToolResultBlock:
		tr := anthropic.ToolResultBlockParam{ToolUseID: b.ToolUseID}
		if b.IsError {
			tr.IsError = anthropic.Bool(true)
		}
		for _, c := range b.Content {
			switch c.Type {
			case llm.ImageBlock:
				img := anthropic.NewImageBlockBase64(c.MIMEType, base64.StdEncoding.EncodeToString(c.Data))
				tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
			default:
				tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: c.Text}})
			}
		}
		return anthropic.ContentBlockParamUnion{OfToolResult: &tr}
	case llm.ImageBlock:
		return anthropic.NewImageBlockBase64(b.MIMEType, base64.StdEncoding.EncodeToString(b.Data))
	default:
		return anthropic.NewTextBlock(b.Text)
	}
}

func setCacheControl(b *anthropic.ContentBlockParamUnion) {
	cc := anthropic.NewCacheControlEphemeralParam()
	switch {
	case b.OfText != nil:
		b.OfText.CacheControl = cc
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = cc
	case b.OfToolUse != nil:
		b.OfToolUse.CacheControl = cc
	case b.OfImage != nil:
		b.OfImage.CacheControl = cc
	}
}

func (p *anthropicProvider) Stream(ctx context.Context, req llm.Request, h llm.Handler) (*llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var acc anthropic.Message
	for stream.Next() {
		ev := stream.Current()
		if err := acc.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("anthropic: reading the stream: %w", err)
		}
		switch ev.Type {
		case "message_start", "message_delta":
			if h.OnUsage != nil {
				h.OnUsage(anthropicUsage(acc.Usage))
			}
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" && h.OnText != nil && ev.Delta.Text != "" {
				h.OnText(ev.Delta.Text)
			}
			if ev.Delta.Type == "thinking_delta" && h.OnThinking != nil && ev.Delta.Thinking != "" {
				h.OnThinking(ev.Delta.Thinking)
			}
		case "content_block_stop":
			if i := int(ev.Index); i >= 0 && i < len(acc.Content) && acc.Content[i].Type == "tool_use" && h.OnToolUse != nil {
				h.OnToolUse(toolUseOf(acc.Content[i].ID, acc.Content[i].Name, acc.Content[i].Input))
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.wrapErr(err)
	}
	resp := &llm.Response{
		Message: llm.Message{Role: llm.Assistant},
		Stop:    llm.StopReason(acc.StopReason),
		Usage:   anthropicUsage(acc.Usage),
	}
	for _, c := range acc.Content {
		switch c.Type {
		case "text":
			if c.Text != "" {
				resp.Message.Content = append(resp.Message.Content, llm.Text(c.Text))
			}
		case "tool_use":
			resp.Message.Content = append(resp.Message.Content, toolUseOf(c.ID, c.Name, c.Input))
		case "thinking":
			resp.Message.Content = append(resp.Message.Content, llm.Block{Type: llm.ThinkingBlock, Text: c.Thinking, Signature: c.Signature})
		case "redacted_thinking":
			resp.Message.Content = append(resp.Message.Content, llm.Block{Type: llm.RedactedThinkingBlock, Data: []byte(c.Data)})
		}
	}
	if resp.Stop == "" {
		resp.Stop = llm.StopEndTurn
	}
	return resp, nil
}

func anthropicUsage(u anthropic.Usage) llm.Usage {
	return llm.Usage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

func toolUseOf(id, name string, input json.RawMessage) llm.Block {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return llm.Block{Type: llm.ToolUseBlock, ID: id, Name: name, Input: append(json.RawMessage(nil), input...)}
}

func (p *anthropicProvider) wrapErr(err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		switch apiErr.StatusCode {
		case 401, 403:
			return &callError{fmt.Sprintf("anthropic refused the API key (HTTP %d): check ANTHROPIC_API_KEY", apiErr.StatusCode), []error{err}}
		case 404:
			return &callError{fmt.Sprintf("anthropic: HTTP 404 from %s: check the model name and ANTHROPIC_BASE_URL", p.base), []error{err}}
		}
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.Error()
		}
		if apiErr.StatusCode == 0 || apiErr.StatusCode == 200 {
			// An error event after the stream had started.
			msg = fmt.Sprintf("anthropic: the reply stopped with an error: %s", msg)
			if t := apiErr.Type(); t != "" {
				msg += " (" + string(t) + ")"
			}
			return &callError{msg, []error{err}}
		}
		errs := []error{err}
		if apiErr.StatusCode == 400 && strings.Contains(strings.ToLower(msg), "prompt is too long") {
			errs = append(errs, llm.ErrContextTooLong)
		}
		return &callError{fmt.Sprintf("anthropic: HTTP %d: %s", apiErr.StatusCode, msg), errs}
	}
	return endpointError("anthropic", p.base, "ANTHROPIC_BASE_URL", err)
}

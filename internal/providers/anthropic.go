package providers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// anthropicProvider speaks the Anthropic Messages API.
type anthropicProvider struct {
	client *http.Client
	model  string
	base   string
	key    string
}

// DefaultMaxTokens is the output budget of a call when none is configured
// (the Messages API requires one).
const DefaultMaxTokens = 16384

// anthropicVersion is the Messages API version requests ask for.
const anthropicVersion = "2023-06-01"

func newAnthropic(model, base, key string, opts Options) *anthropicProvider {
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &anthropicProvider{client: client, model: model, base: strings.TrimRight(base, "/"), key: key}
}

// The request, as the Messages API takes it.
type (
	anthropicRequest struct {
		MaxTokens int                `json:"max_tokens"`
		Messages  []anthropicMessage `json:"messages"`
		Model     string             `json:"model"`
		Stream    bool               `json:"stream"`
		System    []map[string]any   `json:"system,omitempty"`
		Thinking  *anthropicThinking `json:"thinking,omitempty"`
		Tools     []anthropicTool    `json:"tools,omitempty"`
	}
	anthropicMessage struct {
		Content []map[string]any `json:"content"`
		Role    string           `json:"role"`
	}
	anthropicThinking struct {
		BudgetTokens int    `json:"budget_tokens"`
		Type         string `json:"type"`
	}
	anthropicTool struct {
		CacheControl *cacheControl  `json:"cache_control,omitempty"`
		Description  string         `json:"description,omitempty"`
		InputSchema  map[string]any `json:"input_schema"`
		Name         string         `json:"name"`
	}
	cacheControl struct {
		Type string `json:"type"`
	}
)

// ephemeral is a prompt-cache breakpoint.
var ephemeral = &cacheControl{Type: "ephemeral"}

// params maps an llm.Request onto the Messages API. Prompt caching: a
// breakpoint on each tool that asks for one (the last built-in tool and the
// last MCP tool) and one on the last block of the last message, so each
// turn reuses the previous turn's prefix.
func (p *anthropicProvider) params(req llm.Request) (anthropicRequest, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	if b := req.ThinkingBudget; b > 0 && maxTokens <= b {
		// The budget is part of the output: leave room for the answer.
		maxTokens = b + DefaultMaxTokens/4
	}
	params := anthropicRequest{Model: p.model, MaxTokens: maxTokens, Stream: true, Messages: []anthropicMessage{}}
	if req.ThinkingBudget > 0 {
		params.Thinking = &anthropicThinking{Type: "enabled", BudgetTokens: max(req.ThinkingBudget, MinThinkingBudget)}
	}
	if req.System != "" {
		params.System = []map[string]any{{"type": "text", "text": req.System}}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return params, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		if schema == nil {
			schema = map[string]any{}
		}
		schema["type"] = "object"
		if schema["properties"] == nil {
			schema["properties"] = map[string]any{}
		}
		tp := anthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema}
		if t.CacheBreakpoint {
			tp.CacheControl = ephemeral
		}
		params.Tools = append(params.Tools, tp)
	}
	for i, m := range req.Messages {
		blocks := make([]map[string]any, 0, len(m.Content))
		for _, b := range m.Content {
			blocks = append(blocks, anthropicBlock(b))
		}
		if i == len(req.Messages)-1 && len(blocks) > 0 {
			if last := blocks[len(blocks)-1]; last["type"] != "thinking" && last["type"] != "redacted_thinking" {
				last["cache_control"] = ephemeral
			}
		}
		role := "user"
		if m.Role == llm.Assistant {
			role = "assistant"
		}
		params.Messages = append(params.Messages, anthropicMessage{Role: role, Content: blocks})
	}
	return params, nil
}

// MinThinkingBudget is the least thinking budget the API takes.
const MinThinkingBudget = 1024

func anthropicBlock(b llm.Block) map[string]any {
	image := func(mime string, data []byte) map[string]any {
		return map[string]any{"type": "image", "source": map[string]any{
			"type": "base64", "media_type": mime, "data": base64.StdEncoding.EncodeToString(data)}}
	}
	switch b.Type {
	case llm.ThinkingBlock:
		return map[string]any{"type": "thinking", "thinking": b.Text, "signature": b.Signature}
	case llm.RedactedThinkingBlock:
		return map[string]any{"type": "redacted_thinking", "data": string(b.Data)}
	case llm.ToolUseBlock:
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": input}
	case llm.ToolResultBlock:
		tr := map[string]any{"type": "tool_result", "tool_use_id": b.ToolUseID}
		if b.IsError {
			tr["is_error"] = true
		}
		content := []map[string]any{}
		for _, c := range b.Content {
			switch c.Type {
			case llm.ImageBlock:
				content = append(content, image(c.MIMEType, c.Data))
			default:
				content = append(content, map[string]any{"type": "text", "text": c.Text})
			}
		}
		if len(content) > 0 {
			tr["content"] = content
		}
		return tr
	case llm.ImageBlock:
		return image(b.MIMEType, b.Data)
	default:
		return map[string]any{"type": "text", "text": b.Text}
	}
}

// anthropicEvent is one streamed event, the fields of every type in one.
type anthropicEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	// message_start
	Message *struct {
		Usage anthropicUsageJSON `json:"usage"`
	} `json:"message"`
	// content_block_start
	ContentBlock *anthropicContent `json:"content_block"`
	// content_block_delta, message_delta
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	// message_delta
	Usage *anthropicUsageJSON `json:"usage"`
}

type anthropicUsageJSON struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// anthropicContent is a content block as it is streamed and completed.
type anthropicContent struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	partial   strings.Builder // the tool input's streamed JSON
}

func (p *anthropicProvider) Stream(ctx context.Context, req llm.Request, h llm.Handler) (*llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	header.Set("Anthropic-Version", anthropicVersion)
	if p.key != "" {
		header.Set("X-Api-Key", p.key)
		header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := post(ctx, p.client, p.base+"/v1/messages", header, params)
	if err != nil {
		return nil, p.wrapErr(err)
	}
	defer resp.Body.Close()
	st := &anthropicStream{h: h}
	if err := events(resp.Body, st.event); err != nil {
		return nil, p.wrapErr(err)
	}
	return st.response(), nil
}

// anthropicStream is one streamed reply being read: the usage so far,
// the content blocks as they are started and completed, why it stopped,
// and the handler told of each piece as it arrives.
type anthropicStream struct {
	h       llm.Handler
	usage   llm.Usage
	content []*anthropicContent
	stop    string
}

// event reads one server-sent event; done is true at the end of the
// message.
func (s *anthropicStream) event(e event) (done bool, err error) {
	if e.name == "error" {
		if ae := asError(e.data, 0); ae != nil {
			return true, ae
		}
	}
	var ev anthropicEvent
	if err := json.Unmarshal(e.data, &ev); err != nil {
		return true, fmt.Errorf("anthropic: reading the stream: %w", err)
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			s.usage = anthropicUsage(ev.Message.Usage, s.usage)
		}
		s.reportUsage()
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.stop = ev.Delta.StopReason
		}
		if ev.Usage != nil {
			s.usage = anthropicUsage(*ev.Usage, s.usage)
		}
		s.reportUsage()
	case "content_block_start":
		if ev.ContentBlock == nil || ev.Index != len(s.content) {
			return true, fmt.Errorf("anthropic: reading the stream: block %d started out of order", ev.Index)
		}
		s.content = append(s.content, ev.ContentBlock)
	case "content_block_delta":
		return false, s.blockDelta(&ev)
	case "content_block_stop":
		return false, s.blockStop(ev.Index)
	case "message_stop":
		return true, nil
	}
	return false, nil
}

func (s *anthropicStream) reportUsage() {
	if s.h.OnUsage != nil {
		s.h.OnUsage(s.usage)
	}
}

// blockDelta adds a piece to a started block: text and thinking are shown
// as they come, a signature and a tool's input JSON are kept.
func (s *anthropicStream) blockDelta(ev *anthropicEvent) error {
	if ev.Index < 0 || ev.Index >= len(s.content) {
		return fmt.Errorf("anthropic: reading the stream: a delta for block %d, which has not started", ev.Index)
	}
	c, h := s.content[ev.Index], s.h
	switch ev.Delta.Type {
	case "text_delta":
		c.Text += ev.Delta.Text
		if h.OnText != nil && ev.Delta.Text != "" {
			h.OnText(ev.Delta.Text)
		}
	case "thinking_delta":
		c.Thinking += ev.Delta.Thinking
		if h.OnThinking != nil && ev.Delta.Thinking != "" {
			h.OnThinking(ev.Delta.Thinking)
		}
	case "signature_delta":
		c.Signature += ev.Delta.Signature
	case "input_json_delta":
		c.partial.WriteString(ev.Delta.PartialJSON)
	}
	return nil
}

// blockStop completes block i: a tool call is reported at once, so that
// safe calls can start while the rest streams.
func (s *anthropicStream) blockStop(i int) error {
	if i < 0 || i >= len(s.content) {
		return fmt.Errorf("anthropic: reading the stream: block %d stopped before it started", i)
	}
	c := s.content[i]
	if c.partial.Len() > 0 {
		c.Input = json.RawMessage(c.partial.String())
	}
	if c.Type == "tool_use" && s.h.OnToolUse != nil {
		s.h.OnToolUse(toolUseOf(c.ID, c.Name, c.Input))
	}
	return nil
}

// response is the reply read: its blocks in order, why it stopped, the
// tokens used.
func (s *anthropicStream) response() *llm.Response {
	out := &llm.Response{Message: llm.Message{Role: llm.Assistant}, Stop: llm.StopReason(s.stop), Usage: s.usage}
	for _, c := range s.content {
		switch c.Type {
		case "text":
			if c.Text != "" {
				out.Message.Content = append(out.Message.Content, llm.Text(c.Text))
			}
		case "tool_use":
			out.Message.Content = append(out.Message.Content, toolUseOf(c.ID, c.Name, c.Input))
		case "thinking":
			out.Message.Content = append(out.Message.Content, llm.Block{Type: llm.ThinkingBlock, Text: c.Thinking, Signature: c.Signature})
		case "redacted_thinking":
			out.Message.Content = append(out.Message.Content, llm.Block{Type: llm.RedactedThinkingBlock, Data: []byte(c.Data)})
		}
	}
	if out.Stop == "" {
		out.Stop = llm.StopEndTurn
	}
	return out
}

// anthropicUsage is the usage so far: message_start gives every count,
// each message_delta the output so far and any count it repeats.
func anthropicUsage(u anthropicUsageJSON, prev llm.Usage) llm.Usage {
	next := prev
	next.OutputTokens = u.OutputTokens
	if u.InputTokens != 0 {
		next.InputTokens = u.InputTokens
	}
	if u.CacheReadInputTokens != 0 {
		next.CacheReadTokens = u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != 0 {
		next.CacheWriteTokens = u.CacheCreationInputTokens
	}
	return next
}

func toolUseOf(id, name string, input json.RawMessage) llm.Block {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return llm.Block{Type: llm.ToolUseBlock, ID: id, Name: name, Input: append(json.RawMessage(nil), input...)}
}

func (p *anthropicProvider) wrapErr(err error) error {
	var apiErr *apiError
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
			if t := apiErr.Type; t != "" {
				msg += " (" + t + ")"
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

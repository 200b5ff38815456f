package providers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// openAIProvider speaks OpenAI's Chat Completions API, which OpenAI,
// Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter all serve.
type openAIProvider struct {
	name   string // the provider's name, for messages
	model  string
	client *http.Client
	base   string
	key    string
}

func newOpenAI(name, model, base, key string, opts Options) *openAIProvider {
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &openAIProvider{name: name, model: model, client: client, base: strings.TrimRight(base, "/"), key: key}
}

// The request, as Chat Completions takes it.
type (
	openAIRequest struct {
		MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
		MaxTokens           int             `json:"max_tokens,omitempty"`
		Messages            []openAIMessage `json:"messages"`
		Model               string          `json:"model"`
		ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
		Stream              bool            `json:"stream"`
		StreamOptions       struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Tools []openAITool `json:"tools,omitempty"`
	}
	openAIMessage struct {
		Content    any              `json:"content,omitempty"` // a string or content parts
		Role       string           `json:"role"`
		ToolCallID string           `json:"tool_call_id,omitempty"`
		ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	}
	openAIToolCall struct {
		Function struct {
			Arguments string `json:"arguments"`
			Name      string `json:"name"`
		} `json:"function"`
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	openAITool struct {
		Function struct {
			Description string         `json:"description,omitempty"`
			Name        string         `json:"name"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
		Type string `json:"type"`
	}
)

// params maps an llm.Request onto Chat Completions: the system prompt is the
// first message, tool results become "tool" messages right after the
// assistant message that asked for them, and images in tool results (which
// tool messages cannot carry) follow in a user message.
func (p *openAIProvider) params(req llm.Request) (openAIRequest, error) {
	params := openAIRequest{Model: p.model, Stream: true, Messages: []openAIMessage{}}
	params.StreamOptions.IncludeUsage = true
	reasoning := p.reasoningModel()
	if req.MaxTokens > 0 {
		if reasoning {
			// OpenAI's reasoning models refuse max_tokens.
			params.MaxCompletionTokens = req.MaxTokens
		} else {
			params.MaxTokens = req.MaxTokens
		}
	}
	if req.ThinkingBudget > 0 && (reasoning || p.name != "openai") {
		// OpenAI's other models refuse the field; the other endpoints
		// (OpenRouter, vLLM, Ollama, ...) take it or pass it on.
		params.ReasoningEffort = ReasoningEffort(req.ThinkingBudget)
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openAIMessage{Role: "system", Content: req.System})
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return params, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		var tool openAITool
		tool.Type = "function"
		tool.Function.Name, tool.Function.Description, tool.Function.Parameters = t.Name, t.Description, schema
		params.Tools = append(params.Tools, tool)
	}
	for _, m := range req.Messages {
		if m.Role == llm.Assistant {
			am := openAIMessage{Role: "assistant"}
			if text := m.TextOf(); text != "" {
				am.Content = text
			}
			for _, b := range m.ToolUses() {
				input := string(b.Input)
				if input == "" {
					input = "{}"
				}
				tc := openAIToolCall{ID: b.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = b.Name, input
				am.ToolCalls = append(am.ToolCalls, tc)
			}
			params.Messages = append(params.Messages, am)
			continue
		}
		var parts []map[string]any
		for _, b := range m.Content {
			switch b.Type {
			case llm.ToolResultBlock:
				var texts []string
				for _, c := range b.Content {
					switch c.Type {
					case llm.ImageBlock:
						parts = append(parts, imagePart(c))
					default:
						texts = append(texts, c.Text)
					}
				}
				text := strings.Join(texts, "\n")
				if b.IsError && !strings.HasPrefix(text, "Error") {
					text = "Error: " + text
				}
				params.Messages = append(params.Messages, openAIMessage{Role: "tool", Content: text, ToolCallID: b.ToolUseID})
			case llm.ImageBlock:
				parts = append(parts, imagePart(b))
			case llm.TextBlock:
				parts = append(parts, map[string]any{"type": "text", "text": b.Text})
			}
		}
		switch {
		case len(parts) == 1 && parts[0]["type"] == "text":
			params.Messages = append(params.Messages, openAIMessage{Role: "user", Content: parts[0]["text"]})
		case len(parts) > 0:
			params.Messages = append(params.Messages, openAIMessage{Role: "user", Content: parts})
		}
	}
	return params, nil
}

// reasoningModel reports whether the model is one of OpenAI's reasoning
// models (o1, o3, o4-mini, gpt-5, ...), which take a reasoning effort and
// max_completion_tokens. Only OpenAI's own endpoint is judged by the name.
func (p *openAIProvider) reasoningModel() bool {
	if p.name != "openai" {
		return false
	}
	m := strings.ToLower(p.model)
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}

// ReasoningEffort maps a thinking budget onto the reasoning effort sent
// to OpenAI-compatible models: under 4096 tokens low, under 16384 medium,
// else high.
func ReasoningEffort(budget int) string {
	switch {
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}

// reasoningFields are the delta fields in which OpenAI-compatible servers
// stream a model's reasoning: DeepSeek's and vLLM's reasoning_content,
// OpenRouter's and Ollama's reasoning.
var reasoningFields = []string{"reasoning_content", "reasoning"}

// reasoningDelta is the reasoning text a streamed delta carries, if any.
func reasoningDelta(d map[string]json.RawMessage) string {
	for _, name := range reasoningFields {
		var text string
		if json.Unmarshal(d[name], &text) == nil && text != "" {
			return text
		}
	}
	return ""
}

func imagePart(b llm.Block) map[string]any {
	return map[string]any{"type": "image_url", "image_url": map[string]any{
		"url": "data:" + b.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(b.Data)}}
}

// openAIChunk is one streamed chunk (or an error object in its place).
type openAIChunk struct {
	Choices []openAIChoice `json:"choices"`
	Usage   *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// openAIChoice is a streamed chunk's piece of one choice.
type openAIChoice struct {
	Index        int                        `json:"index"`
	Delta        map[string]json.RawMessage `json:"delta"`
	FinishReason string                     `json:"finish_reason"`
}

// openAIToolDelta is a piece of a streamed tool call.
type openAIToolDelta struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// pendingCall accumulates one streamed tool call.
type pendingCall struct {
	id, name string
	args     strings.Builder
	reported bool
}

func (p *openAIProvider) Stream(ctx context.Context, req llm.Request, h llm.Handler) (*llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	if p.key != "" {
		header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := post(ctx, p.client, p.base+"/chat/completions", header, params)
	if err != nil {
		return nil, p.wrapErr(err)
	}
	defer resp.Body.Close()
	st := &openAIStream{name: p.name, h: h, calls: map[int64]*pendingCall{}}
	err = events(resp.Body, st.event)
	if errors.Is(err, io.ErrUnexpectedEOF) && st.finish != "" {
		err = nil // a server that ends the stream without [DONE]
	}
	if err != nil {
		return nil, p.wrapErr(err)
	}
	st.flush(0, true)
	return st.response(), nil
}

// openAIStream is one streamed reply being read: its text, the tool calls
// by index as they accumulate, why it finished, the usage, and the
// handler told of each piece as it arrives.
type openAIStream struct {
	name   string // the provider's, for messages
	h      llm.Handler
	text   strings.Builder
	calls  map[int64]*pendingCall
	order  []int64 // the calls' indexes, in the order they started
	finish string
	usage  llm.Usage
}

// flush reports the calls that are complete: those before index before,
// or all. A call is complete once a later call starts or the choice
// finishes; it is reported then, so safe calls can start while the rest
// streams.
func (s *openAIStream) flush(before int64, all bool) {
	for _, idx := range s.order {
		c := s.calls[idx]
		if !c.reported && (all || idx < before) {
			c.reported = true
			if s.h.OnToolUse != nil {
				s.h.OnToolUse(c.block())
			}
		}
	}
}

// event reads one server-sent chunk; done is true at [DONE].
func (s *openAIStream) event(e event) (done bool, err error) {
	if string(e.data) == "[DONE]" {
		return true, nil
	}
	if ae := asError(e.data, 0); ae != nil {
		return true, ae
	}
	var chunk openAIChunk
	if err := json.Unmarshal(e.data, &chunk); err != nil {
		return true, fmt.Errorf("%s: reading the stream: %w", s.name, err)
	}
	if u := chunk.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
		s.usage = llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadTokens: u.PromptTokensDetails.CachedTokens}
		if s.h.OnUsage != nil {
			s.h.OnUsage(s.usage)
		}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		if err := s.choice(ch); err != nil {
			return true, err
		}
	}
	return false, nil
}

// choice reads the first choice's delta: reasoning, text, tool calls and
// the finish reason.
func (s *openAIStream) choice(ch openAIChoice) error {
	h := s.h
	if d := reasoningDelta(ch.Delta); d != "" && h.OnThinking != nil {
		h.OnThinking(d)
	}
	var d string
	if json.Unmarshal(ch.Delta["content"], &d) == nil && d != "" {
		s.flush(0, true) // text after a call means the call is complete
		s.text.WriteString(d)
		if h.OnText != nil {
			h.OnText(d)
		}
	}
	var toolCalls []openAIToolDelta
	if raw := ch.Delta["tool_calls"]; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &toolCalls); err != nil {
			return fmt.Errorf("%s: reading the stream: tool_calls: %w", s.name, err)
		}
	}
	for _, tc := range toolCalls {
		s.toolDelta(tc)
	}
	if ch.FinishReason != "" {
		s.finish = ch.FinishReason
		s.flush(0, true)
	}
	return nil
}

// toolDelta adds a piece of a tool call; a call's first piece completes
// the calls before it.
func (s *openAIStream) toolDelta(tc openAIToolDelta) {
	c, ok := s.calls[tc.Index]
	if !ok {
		s.flush(tc.Index, false)
		c = &pendingCall{}
		s.calls[tc.Index] = c
		s.order = append(s.order, tc.Index)
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	if tc.Function.Name != "" {
		c.name = tc.Function.Name
	}
	c.args.WriteString(tc.Function.Arguments)
}

// response is the reply read: its text, then its tool calls by index,
// and why it stopped.
func (s *openAIStream) response() *llm.Response {
	out := &llm.Response{Message: llm.Message{Role: llm.Assistant}, Usage: s.usage}
	if s.text.Len() > 0 {
		out.Message.Content = append(out.Message.Content, llm.Text(s.text.String()))
	}
	order := slices.Sorted(slices.Values(s.order))
	for _, idx := range order {
		out.Message.Content = append(out.Message.Content, s.calls[idx].block())
	}
	switch s.finish {
	case "tool_calls", "function_call":
		out.Stop = llm.StopToolUse
	case "length":
		out.Stop = llm.StopMaxTokens
	case "content_filter":
		out.Stop = llm.StopRefusal
	default:
		out.Stop = llm.StopEndTurn
	}
	if len(order) > 0 {
		out.Stop = llm.StopToolUse
	}
	return out
}

func (c *pendingCall) block() llm.Block {
	args := strings.TrimSpace(c.args.String())
	if args == "" {
		args = "{}"
	}
	raw := json.RawMessage(args)
	if !json.Valid(raw) {
		// Keep what the model sent as a string, so the validation error the
		// model gets back shows what it wrote.
		b, _ := json.Marshal(map[string]string{"_invalid_json": args})
		raw = b
	}
	id := c.id
	if id == "" {
		id = "call_" + c.name
	}
	return llm.Block{Type: llm.ToolUseBlock, ID: id, Name: c.name, Input: raw}
}

func (p *openAIProvider) wrapErr(err error) error {
	var apiErr *apiError
	if errors.As(err, &apiErr) {
		switch apiErr.StatusCode {
		case 401, 403:
			return &callError{fmt.Sprintf("%s refused the API key (HTTP %d): check OPENAI_API_KEY", p.name, apiErr.StatusCode), []error{err}}
		case 404:
			return &callError{fmt.Sprintf("%s: HTTP 404 from %s: check the model name and the base URL (OPENAI_BASE_URL / --base-url)", p.name, p.base), []error{err}}
		}
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.Error()
		}
		if apiErr.StatusCode == 0 {
			// An error object in a stream that had started.
			msg = fmt.Sprintf("%s: the reply stopped with an error: %s", p.name, msg)
			if t := apiErr.Type; t != "" {
				msg += " (" + t + ")"
			}
			return &callError{msg, []error{err}}
		}
		errs := []error{err}
		if apiErr.StatusCode == 400 && contextTooLong(apiErr.Code, msg) {
			errs = append(errs, llm.ErrContextTooLong)
		}
		return &callError{fmt.Sprintf("%s: HTTP %d: %s", p.name, apiErr.StatusCode, msg), errs}
	}
	return endpointError(p.name, p.base, "OPENAI_BASE_URL", err)
}

// contextTooLong recognises the context-length errors of OpenAI-compatible
// servers (OpenAI's code, and the wordings of vLLM, llama.cpp and Ollama).
func contextTooLong(code, msg string) bool {
	if code == "context_length_exceeded" {
		return true
	}
	m := strings.ToLower(msg)
	for _, w := range []string{"maximum context length", "context length", "context window", "prompt is too long", "too many tokens"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

package providers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// openAIProvider speaks OpenAI's Chat Completions API, which OpenAI,
// Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter all serve.
type openAIProvider struct {
	name   string // the provider's name, for messages
	model  string
	client openai.Client
	base   string
}

func newOpenAI(name, model, base, key string, opts Options) *openAIProvider {
	ro := []option.RequestOption{option.WithBaseURL(base)}
	if key != "" {
		ro = append(ro, option.WithAPIKey(key))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	// Retries are made by the retrying wrapper (retry.go), which reports them.
	ro = append(ro, option.WithMaxRetries(0))
	return &openAIProvider{name: name, model: model, client: openai.NewClient(ro...), base: base}
}

// params maps an llm.Request onto Chat Completions: the system prompt is the
// first message, tool results become "tool" messages right after the
// assistant message that asked for them, and images in tool results (which
// tool messages cannot carry) follow in a user message.
func (p *openAIProvider) params(req llm.Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	reasoning := p.reasoningModel()
	if req.MaxTokens > 0 {
		if reasoning {
			// OpenAI's reasoning models refuse max_tokens.
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.ThinkingBudget > 0 && (reasoning || p.name != "openai") {
		// OpenAI's other models refuse the field; the other endpoints
		// (OpenRouter, vLLM, Ollama, ...) take it or pass it on.
		params.ReasoningEffort = shared.ReasoningEffort(ReasoningEffort(req.ThinkingBudget))
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return params, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	for _, m := range req.Messages {
		if m.Role == llm.Assistant {
			var am openai.ChatCompletionAssistantMessageParam
			if text := m.TextOf(); text != "" {
				am.Content.OfString = openai.String(text)
			}
			for _, b := range m.ToolUses() {
				input := string(b.Input)
				if input == "" {
					input = "{}"
				}
				am.ToolCalls = append(am.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       b.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: input},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &am})
			continue
		}
		var parts []openai.ChatCompletionContentPartUnionParam
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
				params.Messages = append(params.Messages, openai.ToolMessage(text, b.ToolUseID))
			case llm.ImageBlock:
				parts = append(parts, imagePart(b))
			case llm.TextBlock:
				parts = append(parts, openai.TextContentPart(b.Text))
			}
		}
		switch {
		case len(parts) == 1 && parts[0].OfText != nil:
			params.Messages = append(params.Messages, openai.UserMessage(parts[0].OfText.Text))
		case len(parts) > 0:
			params.Messages = append(params.Messages, openai.UserMessage(parts))
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
		return string(shared.ReasoningEffortLow)
	case budget < 16384:
		return string(shared.ReasoningEffortMedium)
	}
	return string(shared.ReasoningEffortHigh)
}

// reasoningFields are the delta fields in which OpenAI-compatible servers
// stream a model's reasoning: DeepSeek's and vLLM's reasoning_content,
// OpenRouter's and Ollama's reasoning.
var reasoningFields = []string{"reasoning_content", "reasoning"}

// reasoningDelta is the reasoning text a streamed delta carries, if any.
func reasoningDelta(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, name := range reasoningFields {
		// Extra fields are never Valid (the SDK has no type for them):
		// their raw JSON is what counts.
		f, ok := d.JSON.ExtraFields[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func imagePart(b llm.Block) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
		URL: "data:" + b.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(b.Data),
	})
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
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var text strings.Builder
	calls := map[int64]*pendingCall{}
	var order []int64
	var finish string
	var usage llm.Usage
	// A call is complete once a later call starts or the choice finishes;
	// report it then, so safe calls can start while the rest streams.
	flush := func(before int64, all bool) {
		for _, idx := range order {
			c := calls[idx]
			if !c.reported && (all || idx < before) {
				c.reported = true
				if h.OnToolUse != nil {
					h.OnToolUse(c.block())
				}
			}
		}
	}
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() && (chunk.Usage.PromptTokens > 0 || chunk.Usage.CompletionTokens > 0) {
			usage = llm.Usage{
				InputTokens:     chunk.Usage.PromptTokens,
				OutputTokens:    chunk.Usage.CompletionTokens,
				CacheReadTokens: chunk.Usage.PromptTokensDetails.CachedTokens,
			}
			if h.OnUsage != nil {
				h.OnUsage(usage)
			}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if d := reasoningDelta(ch.Delta); d != "" && h.OnThinking != nil {
				h.OnThinking(d)
			}
			if d := ch.Delta.Content; d != "" {
				flush(0, true) // text after a call means the call is complete
				text.WriteString(d)
				if h.OnText != nil {
					h.OnText(d)
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				c, ok := calls[tc.Index]
				if !ok {
					flush(tc.Index, false)
					c = &pendingCall{}
					calls[tc.Index] = c
					order = append(order, tc.Index)
				}
				if tc.ID != "" {
					c.id = tc.ID
				}
				if tc.Function.Name != "" {
					c.name = tc.Function.Name
				}
				c.args.WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
				flush(0, true)
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.wrapErr(err)
	}
	flush(0, true)
	resp := &llm.Response{Message: llm.Message{Role: llm.Assistant}, Usage: usage}
	if text.Len() > 0 {
		resp.Message.Content = append(resp.Message.Content, llm.Text(text.String()))
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	for _, idx := range order {
		resp.Message.Content = append(resp.Message.Content, calls[idx].block())
	}
	switch finish {
	case "tool_calls", "function_call":
		resp.Stop = llm.StopToolUse
	case "length":
		resp.Stop = llm.StopMaxTokens
	case "content_filter":
		resp.Stop = llm.StopRefusal
	default:
		resp.Stop = llm.StopEndTurn
	}
	if len(order) > 0 {
		resp.Stop = llm.StopToolUse
	}
	return resp, nil
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
	var apiErr *openai.Error
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

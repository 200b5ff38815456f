package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Role is who wrote a message.
type Role string

// The two conversation roles. System text travels in [Request.System].
const (
	User      Role = "user"
	Assistant Role = "assistant"
)

// BlockType says what a Block carries.
type BlockType string

// The block types of a conversation.
const (
	TextBlock       BlockType = "text"
	ImageBlock      BlockType = "image"
	ToolUseBlock    BlockType = "tool_use"
	ToolResultBlock BlockType = "tool_result"
	// ThinkingBlock is the model's extended thinking (Text), with the
	// Signature the API wants back; RedactedThinkingBlock carries encrypted
	// thinking in Data. Both go back to the model unchanged.
	ThinkingBlock         BlockType = "thinking"
	RedactedThinkingBlock BlockType = "redacted_thinking"
)

// Block is one piece of a message's content.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input describe a tool_use block: the model's call.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, IsError and Content describe a tool_result block; Content
	// holds text and image blocks.
	ToolUseID string  `json:"tool_use_id,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
	Content   []Block `json:"content,omitempty"`
	// MIMEType and Data are an image block's media type and bytes.
	MIMEType string `json:"mime_type,omitempty"`
	Data     []byte `json:"data,omitempty"`
	// Signature authenticates a thinking block.
	Signature string `json:"signature,omitempty"`
}

// Text makes a text block.
func Text(s string) Block { return Block{Type: TextBlock, Text: s} }

// Message is one turn of the conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// TextOf joins the text blocks of m.
func (m Message) TextOf() string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == TextBlock && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "")
}

// ToolUses returns m's tool_use blocks in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == ToolUseBlock {
			out = append(out, b)
		}
	}
	return out
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	// Schema is the input JSON Schema object.
	Schema json.RawMessage
	// CacheBreakpoint asks models that support prompt caching to cache the
	// request prefix up to and including this tool.
	CacheBreakpoint bool
}

// Request is one model call. Which model answers is the [Model]'s business.
type Request struct {
	System   string
	Messages []Message
	Tools    []Tool
	// MaxTokens is the answer's output budget; 0 means the model's default.
	MaxTokens int
	// ThinkingBudget, when positive, turns on extended thinking with this
	// many tokens for it, where the model supports it (Anthropic's);
	// others ignore it.
	ThinkingBudget int
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, in Anthropic's vocabulary; other wire formats are mapped
// onto them.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopSequence  StopReason = "stop_sequence"
	StopRefusal   StopReason = "refusal"
)

// Usage counts tokens of one call (or, summed, of several).
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_input_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_creation_input_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Response is a finished model call: an assistant message.
type Response struct {
	Message Message
	Stop    StopReason
	Usage   Usage
}

// Handler receives a response while it streams. Both fields are optional.
// Calls come from the goroutine that called [Model.Stream], in order.
type Handler struct {
	// OnText receives each piece of assistant text.
	OnText func(delta string)
	// OnToolUse receives each tool call as soon as its input is complete.
	OnToolUse func(b Block)
	// OnRetry is told about each retry of a failed call, before its wait.
	OnRetry func(RetryInfo)
	// OnThinking receives each piece of extended thinking (or reasoning,
	// from OpenAI-compatible endpoints that stream it).
	OnThinking func(delta string)
	// OnUsage receives the call's token usage as the provider reports it
	// while the reply streams: each report is the call's total so far
	// (Anthropic's message_start and message_delta, an OpenAI-compatible
	// stream's usage chunks), the last one its final count.
	OnUsage func(Usage)
}

// Model is a language model that can use tools.
type Model interface {
	// Stream makes one model call, reporting text and tool calls to h as
	// they arrive (a model that cannot stream may report nothing), and
	// returns the whole response.
	Stream(ctx context.Context, req Request, h Handler) (*Response, error)
}

// ErrContextTooLong is matched (errors.Is) by a call's error when the request
// did not fit the model's context window.
var ErrContextTooLong = errors.New("the conversation is too long for the model's context window")

// RetryInfo describes one retry, reported before its wait.
type RetryInfo struct {
	// Attempt is the attempt about to be made (2 for the first retry) and
	// MaxAttempts the limit.
	Attempt, MaxAttempts int
	// Delay is the nominal wait before it (a test may shorten the real one).
	Delay time.Duration
	// Err is the failure being retried.
	Err error
	// Discarded is true when text of the failed attempt had already been
	// streamed to OnText: the retry streams the reply again.
	Discarded bool
}

// String words the retry for the user: "Retrying in 4s, attempt 3/10".
func (r RetryInfo) String() string {
	return fmt.Sprintf("Retrying in %s, attempt %d/%d", formatDelay(r.Delay), r.Attempt, r.MaxAttempts)
}

func formatDelay(d time.Duration) string {
	if d < 10*time.Second && d%time.Second != 0 {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

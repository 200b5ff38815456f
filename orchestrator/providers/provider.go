package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
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
	// CacheBreakpoint asks providers that support prompt caching to cache
	// the request prefix up to and including this tool.
	CacheBreakpoint bool
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, in Anthropic's vocabulary; OpenAI's are mapped onto them.
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

// Response is a finished model call.
type Response struct {
	Message Message
	Stop    StopReason
	Usage   Usage
}

// Handler receives a response while it streams. Both fields are optional.
// Calls come from the goroutine that called [Provider.Stream], in order.
type Handler struct {
	// OnText receives each piece of assistant text.
	OnText func(delta string)
	// OnToolUse receives each tool call as soon as its input is complete.
	OnToolUse func(b Block)
	// OnRetry is told about each retry of a failed call, before its wait.
	OnRetry func(RetryInfo)
}

// Provider is a model API.
type Provider interface {
	// Name is the provider's name as written in --model ("anthropic", "openai", "ollama", ...).
	Name() string
	// Stream makes one model call, reporting text and tool calls to h as
	// they arrive, and returns the whole response.
	Stream(ctx context.Context, req Request, h Handler) (*Response, error)
}

// Options configure [New].
type Options struct {
	// Model is "provider/name" (e.g. "anthropic/claude-sonnet-4-5",
	// "openai/gpt-4.1", "ollama/qwen3"). A bare name starting with "claude"
	// means Anthropic.
	Model string
	// BaseURL overrides the endpoint (--base-url).
	BaseURL string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient is used for every request; nil means the SDK's default.
	HTTPClient *http.Client
	// MaxRetries is how often a call that failed with a transient error
	// is retried; negative means DefaultMaxAttempts-1.
	MaxRetries int
	// Sleep waits between attempts; nil means a timer. Tests pass one that
	// records the delays instead of waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// RetryUnit is how long one second of backoff lasts; 0 means a second.
	// Tests set a millisecond (chat reads it from RetryUnitEnv), so that a
	// wait shown as "4s" lasts 4ms; the delays reported to
	// [Handler.OnRetry] stay nominal.
	RetryUnit time.Duration
}

// ErrContextTooLong is matched (errors.Is) by a call's error when the
// request did not fit the model's context window; the agent compacts the
// conversation and tries once more.
var ErrContextTooLong = errors.New("the conversation is too long for the model's context window")

// callError is a failed call worded for the user, keeping the SDK's error
// (and ErrContextTooLong where it applies) for errors.As and errors.Is.
type callError struct {
	msg  string
	errs []error
}

func (e *callError) Error() string   { return e.msg }
func (e *callError) Unwrap() []error { return e.errs }

// openAICompatible lists the OpenAI-compatible providers known by name:
// their default endpoint and the variable holding their key.
var openAICompatible = map[string]struct{ baseURL, keyVar string }{
	"openai":     {"https://api.openai.com/v1", "OPENAI_API_KEY"},
	"ollama":     {"http://localhost:11434/v1", ""},
	"lmstudio":   {"http://localhost:1234/v1", ""},
	"vllm":       {"http://localhost:8000/v1", ""},
	"llamacpp":   {"http://localhost:8080/v1", ""},
	"llama.cpp":  {"http://localhost:8080/v1", ""},
	"openrouter": {"https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
}

// SplitModel splits "provider/name" at the first slash. A bare name that
// starts with "claude" belongs to Anthropic.
func SplitModel(spec string) (provider, name string, err error) {
	spec = strings.TrimSpace(spec)
	p, n, ok := strings.Cut(spec, "/")
	if !ok {
		if strings.HasPrefix(spec, "claude") {
			return "anthropic", spec, nil
		}
		return "", "", fmt.Errorf("model %q must be written provider/name, e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1 or ollama/qwen3", spec)
	}
	if p == "" || n == "" {
		return "", "", fmt.Errorf("model %q must be written provider/name, with both parts non-empty", spec)
	}
	return strings.ToLower(p), n, nil
}

// New builds the provider named by opts.Model and returns it with the
// model's name within that provider.
func New(opts Options) (Provider, string, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	prov, model, err := SplitModel(opts.Model)
	if err != nil {
		return nil, "", err
	}
	if prov == "anthropic" {
		base := firstNonEmpty(opts.BaseURL, getenv("ANTHROPIC_BASE_URL"), "https://api.anthropic.com")
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" && !isLocal(base) {
			return nil, "", errors.New("ANTHROPIC_API_KEY is not set: export your Anthropic API key (or point ANTHROPIC_BASE_URL / --base-url at a local endpoint)")
		}
		return withRetries(newAnthropic(base, key, opts), opts), model, nil
	}
	known, isKnown := openAICompatible[prov]
	base := opts.BaseURL
	if base == "" && (prov == "openai" || !isKnown) {
		base = getenv("OPENAI_BASE_URL")
	}
	if base == "" {
		base = known.baseURL
	}
	if base == "" {
		return nil, "", fmt.Errorf("no endpoint for provider %q: pass --base-url or set OPENAI_BASE_URL to its OpenAI-compatible /v1 URL", prov)
	}
	keyVar := known.keyVar
	if keyVar == "" || !isKnown {
		keyVar = "OPENAI_API_KEY"
	}
	key := getenv(keyVar)
	if key == "" && prov != "openai" && keyVar != "OPENAI_API_KEY" {
		key = getenv("OPENAI_API_KEY")
	}
	if key == "" && known.keyVar != "" && !isLocal(base) {
		return nil, "", fmt.Errorf("%s is not set: export your %s API key (or use --base-url for a local endpoint that needs none)", keyVar, prov)
	}
	return withRetries(newOpenAI(prov, base, key, opts), opts), model, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// isLocal reports whether base points at this machine, where servers such
// as Ollama need no key.
func isLocal(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ContextWindow is the context size assumed for model when none is
// configured: generous for hosted models, conservative for local ones.
func ContextWindow(provider, model string) int {
	m := strings.ToLower(model)
	switch {
	case provider == "anthropic" || strings.Contains(m, "claude"):
		return 200_000
	case strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-5"):
		return 400_000
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return 128_000
	case provider == "openai" || provider == "openrouter":
		return 128_000
	}
	return 32_000
}

// endpointError words a transport failure: which endpoint could not be
// reached and what to set.
func endpointError(provider, base, envVar string, err error) error {
	var ne net.Error
	var oe *net.OpError
	var ue *url.Error
	if errors.As(err, &oe) || errors.As(err, &ne) || (errors.As(err, &ue) && !errors.Is(err, context.Canceled)) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("cannot reach the %s endpoint %s (%v): check that it is running, or set %s / --base-url", provider, base, rootCause(err), envVar)
	}
	return err
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

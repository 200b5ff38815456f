package providers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

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
	// the handler's OnRetry stay nominal.
	RetryUnit time.Duration
}

// callError is a failed call worded for the user, keeping the SDK's error
// (and llm.ErrContextTooLong where it applies) for errors.As and errors.Is.
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

// New builds the client for the model named by opts.Model.
func New(opts Options) (llm.Model, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	prov, model, err := SplitModel(opts.Model)
	if err != nil {
		return nil, err
	}
	if prov == "anthropic" {
		base := firstNonEmpty(opts.BaseURL, getenv("ANTHROPIC_BASE_URL"), "https://api.anthropic.com")
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" && !isLocal(base) {
			return nil, errors.New("ANTHROPIC_API_KEY is not set: export your Anthropic API key (or point ANTHROPIC_BASE_URL / --base-url at a local endpoint)")
		}
		return withRetries(newAnthropic(model, base, key, opts), opts), nil
	}
	known, isKnown := openAICompatible[prov]
	// Every OpenAI-compatible provider honours OPENAI_BASE_URL (an Ollama on
	// another machine, a proxy in front of vLLM); --base-url comes first.
	base := firstNonEmpty(opts.BaseURL, getenv("OPENAI_BASE_URL"), known.baseURL)
	if base == "" {
		return nil, fmt.Errorf("no endpoint for provider %q: pass --base-url or set OPENAI_BASE_URL to its OpenAI-compatible /v1 URL", prov)
	}
	keyVar := known.keyVar
	if keyVar == "" || !isKnown {
		keyVar = "OPENAI_API_KEY"
	}
	key := getenv(keyVar)
	if key == "" && keyVar != "OPENAI_API_KEY" && base != known.baseURL {
		// OPENAI_API_KEY goes with OPENAI_BASE_URL (or --base-url): never
		// to the provider's own endpoint, which has a key of its own.
		key = getenv("OPENAI_API_KEY")
	}
	if key == "" && known.keyVar != "" && !isLocal(base) {
		return nil, fmt.Errorf("%s is not set: export your %s API key (or use --base-url for a local endpoint that needs none)", keyVar, prov)
	}
	return withRetries(newOpenAI(prov, model, base, key, opts), opts), nil
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

// KeyVars are the environment variables the providers read their API keys
// from (commands run by the tools must not see them: sandbox/proc's
// SecretEnv lists them all).
func KeyVars() []string {
	out := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}
	for _, p := range openAICompatible {
		if p.keyVar != "" && !slices.Contains(out, p.keyVar) {
			out = append(out, p.keyVar)
		}
	}
	slices.Sort(out)
	return out
}

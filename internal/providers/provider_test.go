package providers

import (
	"context"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, model, base string
		env               map[string]string
		wantProvider      string
		wantModel         string
		wantBase          string // checked when set
		wantErr           string
	}{
		{name: "anthropic_with_key", model: "anthropic/claude-x", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantProvider: "anthropic", wantModel: "claude-x"},
		{name: "bare_claude_name", model: "claude-x", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantProvider: "anthropic", wantModel: "claude-x"},
		{name: "anthropic_missing_key", model: "anthropic/claude-x", wantErr: "ANTHROPIC_API_KEY is not set"},
		{name: "anthropic_local_endpoint_needs_no_key", model: "anthropic/m", env: map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, wantProvider: "anthropic", wantModel: "m"},
		{name: "openai_missing_key", model: "openai/gpt-4.1", wantErr: "OPENAI_API_KEY is not set"},
		{name: "openai_with_key", model: "openai/gpt-4.1", env: map[string]string{"OPENAI_API_KEY": "k"}, wantProvider: "openai", wantModel: "gpt-4.1"},
		{name: "ollama_needs_no_key", model: "ollama/qwen3:8b", wantProvider: "ollama", wantModel: "qwen3:8b", wantBase: "http://localhost:11434/v1"},
		{name: "ollama_honours_OPENAI_BASE_URL", model: "ollama/qwen3", env: map[string]string{"OPENAI_BASE_URL": "http://gpu-box:11434/v1"}, wantProvider: "ollama", wantModel: "qwen3", wantBase: "http://gpu-box:11434/v1"},
		{name: "vllm_honours_OPENAI_BASE_URL", model: "vllm/m", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9000/v1"}, wantProvider: "vllm", wantModel: "m", wantBase: "http://127.0.0.1:9000/v1"},
		{name: "base_url_flag_wins", model: "ollama/qwen3", base: "http://flag:1/v1", env: map[string]string{"OPENAI_BASE_URL": "http://env:2/v1"}, wantProvider: "ollama", wantModel: "qwen3", wantBase: "http://flag:1/v1"},
		{name: "openai_honours_OPENAI_BASE_URL", model: "openai/gpt-4.1", env: map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://proxy:3/v1"}, wantProvider: "openai", wantModel: "gpt-4.1", wantBase: "http://proxy:3/v1"},
		{name: "openrouter_model_with_slash", model: "openrouter/anthropic/claude-x", env: map[string]string{"OPENROUTER_API_KEY": "k"}, wantProvider: "openrouter", wantModel: "anthropic/claude-x"},
		{name: "openrouter_never_gets_the_OpenAI_key", model: "openrouter/m", env: map[string]string{"OPENAI_API_KEY": "k"}, wantErr: "OPENROUTER_API_KEY is not set"},
		{name: "openrouter_through_OPENAI_BASE_URL_takes_OPENAI_API_KEY", model: "openrouter/m", env: map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "https://proxy.example/v1"}, wantProvider: "openrouter", wantModel: "m", wantBase: "https://proxy.example/v1"},
		{name: "unknown_provider_needs_base_url", model: "acme/m1", wantErr: "pass --base-url or set OPENAI_BASE_URL"},
		{name: "unknown_provider_with_base_url", model: "acme/m1", base: "http://localhost:1/v1", wantProvider: "acme", wantModel: "m1"},
		{name: "no_provider", model: "gpt-4", wantErr: "must be written provider/name"},
		{name: "empty_name", model: "openai/", wantErr: "both parts non-empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(Options{Model: tc.model, BaseURL: tc.base, Getenv: env(tc.env), MaxRetries: 0})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var provider, model, base string
			if r, ok := p.(*retrying); ok {
				p = r.Model
			}
			switch p := p.(type) {
			case *anthropicProvider:
				provider, model, base = "anthropic", p.model, p.base
			case *openAIProvider:
				provider, model, base = p.name, p.model, p.base
			}
			if tc.wantBase != "" && base != tc.wantBase {
				t.Errorf("endpoint = %s, want %s", base, tc.wantBase)
			}
			if provider != tc.wantProvider || model != tc.wantModel {
				t.Errorf("got %s %s, want %s %s", provider, model, tc.wantProvider, tc.wantModel)
			}
		})
	}
}

func TestStream_unreachable_endpoint(t *testing.T) {
	t.Parallel()
	addr := testbin.FreeAddr(t) // nothing listens there
	for _, tc := range []struct{ model, base, envVar string }{
		{"anthropic/m", "http://" + addr, "ANTHROPIC_BASE_URL"},
		{"ollama/m", "http://" + addr + "/v1", "OPENAI_BASE_URL"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			p, err := New(Options{Model: tc.model, BaseURL: tc.base, Getenv: env(nil), MaxRetries: 0})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Content: []llm.Block{llm.Text("hi")}}}}, llm.Handler{})
			if err == nil || !strings.Contains(err.Error(), "cannot reach") || !strings.Contains(err.Error(), tc.envVar) || !strings.Contains(err.Error(), addr) {
				t.Errorf("err = %v, want a one-line 'cannot reach' naming %s and %s", err, addr, tc.envVar)
			}
		})
	}
}

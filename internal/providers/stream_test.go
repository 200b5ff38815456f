package providers_test

import (
	"context"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/providers"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

func newModel(t *testing.T, spec, baseURL string) llm.Model {
	t.Helper()
	p, err := providers.New(providers.Options{Model: spec, BaseURL: baseURL, MaxRetries: 0, RetryUnit: time.Millisecond,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hi() llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.User, Content: []llm.Block{llm.Text("hi")}}}}
}

// The usage the provider streams reaches OnUsage as it arrives: a report
// in the middle of the reply, then the final count, which the response
// carries too.
func TestStream_usage_reported_as_it_arrives(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			srv := testmodel.NewServer(t, testmodel.Reply{Parts: []testmodel.Part{{Text: "some text"}, {Usage: 7}, {Text: "more"}},
				InputTokens: 120, OutputTokens: 15})
			var reports []llm.Usage
			resp, err := newModel(t, format+"/test-model", base(format, srv)).Stream(context.Background(), hi(),
				llm.Handler{OnUsage: func(u llm.Usage) { reports = append(reports, u) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(reports) < 2 {
				t.Fatalf("usage reports %v, want the one mid-stream and the final one", reports)
			}
			mid, last := reports[len(reports)-2], reports[len(reports)-1]
			if mid.OutputTokens != 7 || mid.InputTokens != 120 {
				t.Errorf("mid-stream report %+v, want 120 in, 7 out", mid)
			}
			if last.OutputTokens != 15 || last.InputTokens != 120 || resp.Usage != last {
				t.Errorf("final report %+v, response usage %+v, want 120 in, 15 out in both", last, resp.Usage)
			}
		})
	}
}

// Thinking on an OpenAI-compatible endpoint: a reasoning effort for
// OpenAI's reasoning models and for the other endpoints (never for
// OpenAI's other models, which refuse it), and the reasoning they stream
// (reasoning_content, or OpenRouter's reasoning) reaches OnThinking
// without becoming part of the reply sent back.
func TestStream_openai_reasoning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spec, field string
		budget            int
		wantEffort        any // nil: no reasoning_effort
		wantMaxField      string
	}{
		{"openai_reasoning_model", "openai/o4-mini", "", 8192, "medium", "max_completion_tokens"},
		{"openai_gpt_5_high", "openai/gpt-5", "", 20000, "high", "max_completion_tokens"},
		{"openai_other_model_gets_no_effort", "openai/gpt-4.1", "", 8192, nil, "max_tokens"},
		{"vllm_reasoning_content", "vllm/qwen3", "", 2048, "low", "max_tokens"},
		{"openrouter_reasoning_field", "openrouter/deepseek/r1", "reasoning", 8192, "medium", "max_tokens"},
		{"thinking_off", "vllm/qwen3", "", 0, nil, "max_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testmodel.NewServer(t, testmodel.Reply{Parts: []testmodel.Part{
				{Thinking: "First, the premises.", ReasoningField: tc.field}, {Text: "The answer."}}})
			p, err := providers.New(providers.Options{Model: tc.spec, BaseURL: srv.URL + "/v1", MaxRetries: 0,
				Getenv: func(k string) string { return map[string]string{"OPENAI_API_KEY": "k", "OPENROUTER_API_KEY": "k"}[k] }})
			if err != nil {
				t.Fatal(err)
			}
			req := hi()
			req.ThinkingBudget, req.MaxTokens = tc.budget, 1000
			var thinking, text string
			resp, err := p.Stream(context.Background(), req, llm.Handler{
				OnThinking: func(d string) { thinking += d }, OnText: func(d string) { text += d }})
			if err != nil {
				t.Fatal(err)
			}
			if thinking != "First, the premises." || text != "The answer." {
				t.Errorf("thinking %q, text %q", thinking, text)
			}
			if len(resp.Message.Content) != 1 || resp.Message.TextOf() != "The answer." {
				t.Errorf("the reply kept %+v, want its text only", resp.Message.Content)
			}
			body := srv.Requests()[0].Body
			if body["reasoning_effort"] != tc.wantEffort {
				t.Errorf("reasoning_effort = %v, want %v", body["reasoning_effort"], tc.wantEffort)
			}
			if body[tc.wantMaxField] != 1000.0 {
				t.Errorf("the output budget went as %s=%v (body %v)", tc.wantMaxField, body[tc.wantMaxField], body)
			}
		})
	}
}

package providers_test

import (
	"context"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/orchestrator/providers"
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

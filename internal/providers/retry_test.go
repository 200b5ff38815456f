package providers_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/providers"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// recorder is an Options.Sleep that records the waits and returns at once.
type recorder struct {
	mu     sync.Mutex
	waits  []time.Duration
	failAt int // the wait (1-based) that reports a cancelled context; 0: none
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	if len(r.waits) == r.failAt {
		return context.Canceled
	}
	return ctx.Err()
}

type call struct {
	retries []llm.RetryInfo
	text    strings.Builder
	tools   int
}

func stream(t *testing.T, format string, srv *testmodel.Server, maxRetries int, rec *recorder) (*llm.Response, *call, error) {
	t.Helper()
	p, err := providers.New(providers.Options{
		Model: format + "/test-model", BaseURL: base(format, srv), MaxRetries: maxRetries, Sleep: rec.sleep,
		RetryUnit: time.Millisecond, Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &call{}
	resp, err := p.Stream(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.User, Content: []llm.Block{llm.Text("hi")}}}},
		llm.Handler{
			OnText:    func(d string) { c.text.WriteString(d) },
			OnToolUse: func(llm.Block) { c.tools++ },
			OnRetry:   func(r llm.RetryInfo) { c.retries = append(c.retries, r) },
		})
	return resp, c, err
}

func base(format string, srv *testmodel.Server) string {
	if format == "openai" {
		return srv.URL + "/v1"
	}
	return srv.URL
}

var formats = []string{"anthropic", "openai"}

func TestRetry_overloaded_three_times_then_success(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			srv := testmodel.NewServer(t, testmodel.Overloaded(), testmodel.Overloaded(), testmodel.Overloaded(), testmodel.Say("finally"))
			rec := &recorder{}
			resp, c, err := stream(t, format, srv, -1, rec)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Message.TextOf(); got != "finally" {
				t.Errorf("text = %q", got)
			}
			if n := len(srv.Requests()); n != 4 {
				t.Errorf("%d requests, want 4", n)
			}
			if len(c.retries) != 3 {
				t.Fatalf("retries = %+v, want 3", c.retries)
			}
			for i, r := range c.retries {
				if r.Attempt != i+2 || r.MaxAttempts != providers.DefaultMaxAttempts {
					t.Errorf("retry %d: attempt %d/%d", i, r.Attempt, r.MaxAttempts)
				}
				// 2^i seconds, the upper half jittered.
				lo, hi := time.Second<<i/2, time.Second<<i
				if r.Delay < lo || r.Delay > hi {
					t.Errorf("retry %d: delay %v outside [%v, %v]", i, r.Delay, lo, hi)
				}
				// The test's unit makes a nominal second one millisecond.
				if want := r.Delay / 1000; rec.waits[i] != want {
					t.Errorf("retry %d: waited %v, want %v", i, rec.waits[i], want)
				}
				if r.Discarded {
					t.Errorf("retry %d: nothing had streamed, yet Discarded", i)
				}
			}
			if s := c.retries[1].String(); !strings.HasPrefix(s, "Retrying in ") || !strings.HasSuffix(s, ", attempt 3/10") {
				t.Errorf("notice %q", s)
			}
		})
	}
}

func TestRetry_honours_retry_after(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"milliseconds", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond},
		{"capped", map[string]string{"Retry-After": "86400"}, 5 * time.Minute},
	} {
		for _, format := range formats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				srv := testmodel.NewServer(t,
					testmodel.Reply{Status: 429, Header: tc.header, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
					testmodel.Say("ok"))
				rec := &recorder{}
				_, c, err := stream(t, format, srv, -1, rec)
				if err != nil {
					t.Fatal(err)
				}
				if len(c.retries) != 1 || c.retries[0].Delay != tc.want {
					t.Fatalf("retries = %+v, want one after %v", c.retries, tc.want)
				}
			})
		}
	}
}

func TestRetry_overload_mid_stream(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			errType := "overloaded_error"
			if format == "openai" {
				errType = "server_error"
			}
			srv := testmodel.NewServer(t,
				testmodel.Reply{Parts: []testmodel.Part{{Text: "half a rep"}, {Error: errType}}},
				testmodel.Say("the whole reply"))
			resp, c, err := stream(t, format, srv, -1, &recorder{})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.retries) != 1 || !c.retries[0].Discarded {
				t.Fatalf("retries = %+v, want one that discards the streamed text", c.retries)
			}
			if got := resp.Message.TextOf(); got != "the whole reply" {
				t.Errorf("text = %q", got)
			}
		})
	}
}

func TestRetry_not_after_a_tool_call_was_reported(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			srv := testmodel.NewServer(t, testmodel.Reply{Parts: []testmodel.Part{
				{Tool: &testmodel.ToolCall{ID: "t1", Name: "Read", Input: `{"file_path":"/x"}`}},
				{Tool: &testmodel.ToolCall{ID: "t2", Name: "Read", Input: `{"file_path":"/y"}`}},
				{Error: "overloaded_error"}}})
			_, c, err := stream(t, format, srv, -1, &recorder{})
			if err == nil {
				t.Fatal("the stream's error was not returned")
			}
			if c.tools == 0 || len(c.retries) != 0 {
				t.Errorf("%d tool calls reported, retries %+v: want the error returned, not retried", c.tools, c.retries)
			}
			if format == "anthropic" && !strings.Contains(err.Error(), "overloaded_error") {
				t.Errorf("err = %v, want it to name the error type", err)
			}
		})
	}
}

func TestRetry_gives_up(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			srv := testmodel.NewServer(t, testmodel.Overloaded(), testmodel.Overloaded(), testmodel.Overloaded())
			_, c, err := stream(t, format, srv, 2, &recorder{})
			if err == nil || !strings.Contains(err.Error(), "HTTP 529") {
				t.Fatalf("err = %v, want the last HTTP 529", err)
			}
			if len(srv.Requests()) != 3 || len(c.retries) != 2 || c.retries[1].MaxAttempts != 3 {
				t.Errorf("%d requests, retries %+v: want 3 attempts in all", len(srv.Requests()), c.retries)
			}
		})
	}
}

func TestRetry_not_on_client_errors(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			srv := testmodel.NewServer(t, testmodel.TooLong())
			_, c, err := stream(t, format, srv, -1, &recorder{})
			if !errors.Is(err, llm.ErrContextTooLong) {
				t.Fatalf("err = %v, want ErrContextTooLong", err)
			}
			if !strings.Contains(err.Error(), "HTTP 400: prompt is too long") {
				t.Errorf("err = %q, want the server's words", err)
			}
			if len(c.retries) != 0 || len(srv.Requests()) != 1 {
				t.Errorf("a 400 was retried: %+v", c.retries)
			}
		})
	}
}

func TestRetry_cancelled_while_waiting(t *testing.T) {
	t.Parallel()
	srv := testmodel.NewServer(t, testmodel.Overloaded())
	_, c, err := stream(t, "anthropic", srv, -1, &recorder{failAt: 1})
	if !errors.Is(err, context.Canceled) || len(c.retries) != 1 || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v, retries %d, requests %d: want the wait's cancellation after one notice", err, len(c.retries), len(srv.Requests()))
	}
}

func TestParseRetryUnit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{{"", 0, false}, {"1ms", time.Millisecond, false}, {"fast", 0, true}, {"-1s", 0, true}, {"0s", 0, true}} {
		got, err := providers.ParseRetryUnit(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%q: %v, %v", tc.in, got, err)
		}
		if err != nil && (!strings.Contains(err.Error(), providers.RetryUnitEnv) || !strings.Contains(err.Error(), "duration")) {
			t.Errorf("%q: error %q does not name the variable and what it expects", tc.in, err)
		}
	}
}

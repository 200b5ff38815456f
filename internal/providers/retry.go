package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// Retries: a model call that fails with a transient error (HTTP 408, 409,
// 429, 5xx including Anthropic's 529, an overloaded or rate-limit error
// event arriving mid-stream, a connection cut mid-stream) is made again,
// up to DefaultMaxAttempts attempts in all, after an exponential backoff
// with jitter: about 1s, 2s, 4s, ... capped at 32s, or what the server's
// retry-after (or retry-after-ms) header asks for, capped at 5 minutes.
// Every retry is reported to the handler's OnRetry before the wait.
//
// A call is not retried once one of its tool calls was reported (the agent
// may already be running it); text already streamed is reported as
// discarded.

// DefaultMaxAttempts bounds the attempts of one model call.
const DefaultMaxAttempts = 10

// RetryUnitEnv names the environment variable that chat reads into
// [Options.RetryUnit] (see [ParseRetryUnit]).
const RetryUnitEnv = "AGENT_MCP_RETRY_UNIT"

// ParseRetryUnit reads RetryUnitEnv's value: "" is 0 (the default).
func ParseRetryUnit(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: expected a positive Go duration such as 1ms", RetryUnitEnv, v)
	}
	return d, nil
}

const (
	backoffCap    = 32 // nominal seconds
	retryAfterCap = 5 * 60
)

// retrying makes a model client's calls again after transient failures.
type retrying struct {
	llm.Model
	maxAttempts int
	unit        time.Duration
	sleep       func(ctx context.Context, d time.Duration) error
	jitter      func() float64 // in [0, 1)
}

// withRetries wraps p according to opts: MaxRetries retries (negative:
// DefaultMaxAttempts-1), RetryUnit, Sleep.
func withRetries(p llm.Model, opts Options) llm.Model {
	attempts := DefaultMaxAttempts
	if opts.MaxRetries >= 0 {
		attempts = opts.MaxRetries + 1
	}
	unit := opts.RetryUnit
	if unit <= 0 {
		unit = time.Second
	}
	sleep := opts.Sleep
	if sleep == nil {
		sleep = sleepContext
	}
	return &retrying{Model: p, maxAttempts: attempts, unit: unit, sleep: sleep, jitter: rand.Float64}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *retrying) Stream(ctx context.Context, req llm.Request, h llm.Handler) (*llm.Response, error) {
	for attempt := 1; ; attempt++ {
		var streamed, called bool
		inner := h
		inner.OnText = func(d string) {
			streamed = true
			if h.OnText != nil {
				h.OnText(d)
			}
		}
		inner.OnThinking = func(d string) {
			streamed = true
			if h.OnThinking != nil {
				h.OnThinking(d)
			}
		}
		inner.OnToolUse = func(b llm.Block) {
			called = true
			if h.OnToolUse != nil {
				h.OnToolUse(b)
			}
		}
		resp, err := r.Model.Stream(ctx, req, inner)
		if err == nil || attempt >= r.maxAttempts || called || ctx.Err() != nil {
			return resp, err
		}
		after, ok := retryable(err)
		if !ok {
			return resp, err
		}
		delay := backoff(attempt, r.jitter())
		if after > 0 {
			delay = min(after, retryAfterCap*time.Second)
		}
		if h.OnRetry != nil {
			h.OnRetry(llm.RetryInfo{Attempt: attempt + 1, MaxAttempts: r.maxAttempts, Delay: delay, Err: err, Discarded: streamed})
		}
		wait := time.Duration(float64(delay) / float64(time.Second) * float64(r.unit))
		if err := r.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// backoff is the nominal wait after the given failed attempt: 2^(n-1)
// seconds capped at backoffCap, the upper half jittered.
func backoff(attempt int, jitter float64) time.Duration {
	d := time.Duration(backoffCap) * time.Second
	if attempt-1 < 6 {
		d = min(d, time.Second<<(attempt-1))
	}
	return d/2 + time.Duration(jitter*float64(d/2))
}

// retryable reports whether err is transient, and the wait the server asked
// for (0 when it did not say).
func retryable(err error) (time.Duration, bool) {
	if errors.Is(err, llm.ErrContextTooLong) {
		return 0, false
	}
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.StatusCode == 0 {
			// An error event in a stream that had started.
			m := strings.ToLower(ae.Type + " " + ae.Code + " " + ae.Message)
			for _, w := range []string{"overloaded", "rate_limit", "rate limit", "api_error", "server_error", "timeout", "unavailable", "capacity"} {
				if strings.Contains(m, w) {
					return 0, true
				}
			}
			return 0, false
		}
		return retryAfter(ae.Response), retryableStatus(ae.StatusCode)
	}
	// A connection cut while the reply streamed; a server that is not
	// running at all (connection refused) fails at once.
	if errors.Is(err, syscall.ECONNREFUSED) {
		return 0, false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return 0, true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.DeadlineExceeded) {
		return 0, true
	}
	return 0, false
}

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict || code == http.StatusTooManyRequests || code >= 500
}

// retryAfter reads retry-after-ms or retry-after (seconds or an HTTP date).
func retryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	if v := resp.Header.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

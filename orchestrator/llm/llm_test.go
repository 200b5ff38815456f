package llm_test

import (
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

func TestRetryInfo_String(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{4 * time.Second, "Retrying in 4s, attempt 3/10"},
		{1300 * time.Millisecond, "Retrying in 1.3s, attempt 3/10"},
		{17400 * time.Millisecond, "Retrying in 17s, attempt 3/10"},
	} {
		if got := (llm.RetryInfo{Attempt: 3, MaxAttempts: 10, Delay: tc.d}).String(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.d, got, tc.want)
		}
	}
}

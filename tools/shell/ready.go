package shell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/tools"
)

// validateWait checks Bash's readiness parameters.
func validateWait(in *BashInput) error {
	if in.WaitFor == "" {
		if in.WaitTimeout != nil {
			return errors.New("wait_timeout needs wait_for: say what the background task prints (a regular expression) or port:N when it is ready")
		}
		return nil
	}
	if !in.RunInBackground {
		return errors.New("wait_for needs run_in_background: true (a command in the foreground already returns when it ends)")
	}
	if _, err := timeoutOf(in.WaitTimeout, BashDefaultWaitTimeoutMS, "wait_timeout"); err != nil {
		return err
	}
	_, err := parseCondition("wait_for", in.WaitFor)
	return err
}

// awaitReady waits for a background task started by Bash to be ready (its
// wait_for condition), to exit, or for wait_timeout, and words the result
// with the output so far. A cancelled call stops the task: its id never
// reached the model.
func awaitReady(ctx context.Context, m *Manager, t *Task, in *BashInput, dir string) (*tools.Result, error) {
	cond, err := parseCondition("wait_for", in.WaitFor)
	if err != nil {
		return nil, err
	}
	timeout, err := timeoutOf(in.WaitTimeout, BashDefaultWaitTimeoutMS, "wait_timeout")
	if err != nil {
		return nil, err
	}
	outcome, err := t.await(ctx, cond, 0, timeout, 0)
	if err != nil {
		m.Stop(t)
		return nil, fmt.Errorf("the background task %s was stopped and its processes ended, since the call was: %w", t.ID, err)
	}
	elapsed := time.Since(t.Started)
	status, code := t.Status()
	raw, truncated := t.readNew()
	output := trimOutput(raw)
	out := BashOutput{BackgroundTaskID: t.ID, OutputFile: t.OutputPath, Cwd: dir, StdoutTruncated: truncated}
	out.Stdout, _ = headChars(output, BashMaxResultSizeChars)
	res := &tools.Result{Output: out}
	var head string
	switch outcome {
	case awaitMet:
		head = fmt.Sprintf("Task %s is ready: %s after %s. It runs on in the background.", t.ID, cond.describe(), seconds(elapsed))
	case awaitExited:
		out.ExitCode = &code
		res.Output = out
		head = fmt.Sprintf("Task %s ended (%s, exit code %d) after %s, before it was ready (wait_for `%s`).", t.ID, status, code, seconds(elapsed), cond.text)
		if code != 0 {
			head = fmt.Sprintf("Exit code %d\n", code) + head
			res.IsError = true
		}
	default:
		head = fmt.Sprintf("Task %s is not ready yet: after %s %s. It keeps running in the background: look again with TaskOutput or stop it with TaskStop.",
			t.ID, formatDuration(timeout), cond.describeNot())
	}
	var b strings.Builder
	b.WriteString(head)
	if output != "" {
		fmt.Fprintf(&b, "\n\nOutput so far:\n%s", middleCut(output, BashMaxResultSizeChars, t.OutputPath))
	} else {
		b.WriteString("\n\n(no output yet)")
	}
	if status == StatusRunning {
		fmt.Fprintf(&b, "\n\nIts output goes to %s; read more with TaskOutput, type into it with TaskInput and end it with TaskStop.", t.OutputPath)
	}
	res.Text = b.String()
	return res, nil
}

// seconds words a duration to a tenth of a second.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", math.Round(d.Seconds()*10)/10)
}

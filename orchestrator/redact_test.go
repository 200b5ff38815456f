package orchestrator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/redact"
	"github.com/agent-mcp/agent-mcp/tools"
)

const pipeSecret = "sk-live-7Hq2Zx9Kq2LmN8pR4sT6vW1yB3"

// TestPipeline_redactsEveryPart: a secret in a result's text, its text
// blocks, its output object, the full output a persisted result is saved
// from (past the part kept in memory), its progress messages and an
// error result's text leaves the pipeline as its marker, and the result
// says so in one line.
func TestPipeline_redactsEveryPart(t *testing.T) {
	t.Parallel()
	var progressSeen []string
	leaky := func(spec *testSpec) {
		spec.MaxResultSizeChars = 5000
		spec.Call = func(_ context.Context, in *testInput, _ *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
			progress(tools.ProgressUpdate{Message: "half-way: " + pipeSecret[:10] + "\n" + pipeSecret[10:]})
			if in.Fail {
				return nil, &os.PathError{Op: "open", Path: pipeSecret, Err: os.ErrNotExist}
			}
			full := strings.Repeat("y", 6000) + base64.StdEncoding.EncodeToString([]byte("x"+pipeSecret))
			return &tools.Result{
				Text:     "token=" + pipeSecret + strings.Repeat("z", in.Size),
				Extra:    []tools.Content{{Kind: tools.TextContent, Text: "again " + pipeSecret}},
				Output:   map[string]any{"stdout": "env: " + pipeSecret},
				FullText: strings.NewReader(full),
			}, nil
		}
	}
	p := newTestPipeline(t, testTool("Leaky", false, nil, leaky))
	p.Redact = redact.New([]redact.Secret{{Name: "STRIPE_KEY", Value: pipeSecret}})
	s := newTestSession(t)
	uc := &tools.UseContext{Session: s}
	progress := func(u tools.ProgressUpdate) { progressSeen = append(progressSeen, u.Message) }

	marker := "[redacted: STRIPE_KEY]"
	out := p.Run(context.Background(), uc, call("1", "Leaky", testInput{}), progress)
	b, _ := json.Marshal(out.Result.Output)
	for what, got := range map[string]string{
		"text": out.Result.Text, "extra": out.Result.Extra[0].Text, "output": string(b), "progress": strings.Join(progressSeen, "|"),
	} {
		if strings.Contains(got, pipeSecret) || strings.Contains(got, pipeSecret[:10]) || !strings.Contains(got, marker) {
			t.Errorf("%s: %q", what, got)
		}
	}
	if !strings.Contains(out.Result.Text, "redacted secret values from this result: STRIPE_KEY") {
		t.Errorf("no notice: %q", out.Result.Text)
	}

	out = p.Run(context.Background(), uc, call("2", "Leaky", testInput{Size: 6000}), progress)
	if out.Persisted == nil {
		t.Fatal("not persisted")
	}
	saved, err := os.ReadFile(out.Persisted.Path)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString([]byte("x" + pipeSecret))
	if strings.Contains(string(saved), enc[4:len(enc)-4]) || !strings.Contains(string(saved), marker) {
		t.Errorf("the persisted file ends %q", saved[len(saved)-80:])
	}
	if !strings.Contains(out.Result.Text, "redacted secret values") {
		t.Errorf("the persisted result has no notice: %q", out.Result.Text[len(out.Result.Text)-200:])
	}

	out = p.Run(context.Background(), uc, call("3", "Leaky", testInput{Fail: true}), progress)
	if !out.Result.IsError || strings.Contains(out.Result.Text, pipeSecret) || !strings.Contains(out.Result.Text, marker) {
		t.Errorf("error result: %q", out.Result.Text)
	}
}

// TestPipeline_noRedactorChangesNothing: without secrets the result is
// left as the tool made it, with no notice.
func TestPipeline_noRedactorChangesNothing(t *testing.T) {
	t.Parallel()
	p := newTestPipeline(t, testTool("Plain", false, nil))
	p.Redact = redact.New(nil)
	out := p.Run(context.Background(), &tools.UseContext{Session: newTestSession(t)}, call("1", "Plain", testInput{Size: 10}), nil)
	if out.Result.Text != strings.Repeat("x", 10) {
		t.Fatalf("text = %q", out.Result.Text)
	}
}

// BenchmarkRedactResult_1MB is what redaction adds to a Bash result of
// 1 MB (its text and the same output in its output object) with thirty
// secrets known: the per-result cost the pipeline pays.
func BenchmarkRedactResult_1MB(b *testing.B) {
	var ss []redact.Secret
	for i := range 30 {
		ss = append(ss, redact.Secret{Name: fmt.Sprintf("SECRET_%d", i), Value: fmt.Sprintf("tok-%02d-%s", i, strings.Repeat("Qx7", 12))})
	}
	p := &Pipeline{Redact: redact.New(ss)}
	var text strings.Builder
	for i := 0; text.Len() < 1<<20; i++ {
		fmt.Fprintf(&text, "2026-12-07T21:00:00Z INFO request id=%08x path=/api/v1/items status=200 bytes=%d\n", i*7919, i)
	}
	out := text.String()
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		res := &tools.Result{Text: out, Output: map[string]any{"stdout": out, "exitCode": 0}}
		var found []string
		p.redactResult(res, &found)
	}
}

package orchestrator

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/tools"
)

// redactResult replaces the secrets p.Redact knows in everything of res
// that leaves the server: its text, its text blocks, its output object,
// and the full output a persisted result is copied from (redacted as it
// is copied, so the saved file holds no secret either). The names of
// the secrets found are added to *found, those of the full output when
// it is read.
func (p *Pipeline) redactResult(res *tools.Result, found *[]string) {
	if p.Redact.Len() == 0 || res == nil {
		return
	}
	add := func(names []string) {
		for _, n := range names {
			if !slices.Contains(*found, n) {
				*found = append(*found, n)
			}
		}
	}
	var names []string
	res.Text, names = p.Redact.String(res.Text)
	add(names)
	for i, c := range res.Extra {
		if c.Kind == tools.TextContent {
			res.Extra[i].Text, names = p.Redact.String(c.Text)
			add(names)
		}
	}
	if res.Output != nil {
		var b []byte
		b, err := json.Marshal(res.Output)
		if err == nil {
			red, names := p.Redact.String(string(b))
			if names != nil {
				add(names)
				var m any
				if json.Unmarshal([]byte(red), &m) != nil {
					// A value that no longer parses is not sent at all.
					m = map[string]any{"redacted": true, "text": res.Text}
				}
				res.Output = m
			}
		}
	}
	if res.FullText != nil {
		res.FullText = p.Redact.Reader(res.FullText, func(n string) { add([]string{n}) })
	}
}

// redactProgress wraps progress so that its messages are redacted too
// (a command's output streams through them).
func (p *Pipeline) redactProgress(progress tools.Progress) tools.Progress {
	if p.Redact.Len() == 0 || progress == nil {
		return progress
	}
	return func(u tools.ProgressUpdate) {
		u.Message, _ = p.Redact.String(u.Message)
		progress(u)
	}
}

// redactedNotice is the line a redacted result ends with.
func redactedNotice(names []string) string {
	return "\n\n(agent-mcp redacted secret values from this result: " + strings.Join(names, ", ") +
		"; each stands as [redacted: NAME].)"
}

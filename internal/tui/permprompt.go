package tui

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/tools"
)

// isPermissionForm reports whether schema is the permitter's question
// ([permit.AskSchema]).
func isPermissionForm(schema map[string]any) bool {
	props, _ := schema["properties"].(map[string]any)
	d, _ := props["decision"].(map[string]any)
	one, _ := d["oneOf"].([]any)
	for _, c := range one {
		if m, _ := c.(map[string]any); m["const"] == permit.ChoiceDeny {
			return true
		}
	}
	return false
}

// The choices of a permission prompt in the full UI.
var permissionChoices = []string{
	"Yes",
	"Yes, and don't ask again for this in this session",
	"No",
	"No, and tell the model what to do instead",
}

// askPermission puts a permission question in the full UI: the call with
// its diff (file changes) or command, why it is asked, and four choices
// picked with the arrow keys. The fourth asks what the model should do
// instead; that text goes back with the refusal ([permit.AnswerFeedback]).
// The call's timer starts again once the question is answered.
func (u *UI) askPermission(ctx context.Context, message string) (tools.Answer, error) {
	f := u.full
	head, body, _ := strings.Cut(strings.TrimRight(message, "\n"), "\n")
	tool := strings.TrimSuffix(strings.TrimPrefix(head, "Allow "), "?")
	f.live.mu.Lock()
	var call *running
	for _, id := range f.live.order {
		if c := f.live.calls[id]; c != nil && c.name == tool {
			call = c
		}
	}
	var label string
	var input []byte
	if call != nil {
		label, input = call.label, call.input
		call.label = "" // not drawn while asked about
	}
	f.live.mu.Unlock()
	defer func() {
		if call != nil {
			f.live.mu.Lock()
			call.label, call.started = label, time.Now()
			f.live.mu.Unlock()
		}
	}()

	var b strings.Builder
	b.WriteString("\n")
	if label != "" {
		b.WriteString(styleBold.Render("Allow "+label+"?") + "\n")
	} else {
		b.WriteString(styleBold.Render(head) + "\n")
	}
	diff := proposedDiff(tool, input, f.cwd())
	for _, l := range diff {
		b.WriteString("    " + l + "\n")
	}
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		if len(diff) > 0 && strings.HasPrefix(l, "Input: ") {
			continue // the diff says it better
		}
		if strings.HasPrefix(l, "Why you are asked: ") {
			l = styleDim.Render(l)
		}
		b.WriteString(l + "\n")
	}
	u.Printf("%s", b.String())
	line, err := u.readFull(ctx, "Choose 1-4: ", true, permissionChoices)
	for err == nil {
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "1", "y", "yes":
			return tools.Answer{Action: "accept", Content: map[string]any{"decision": permit.ChoiceAllowOnce}}, nil
		case "2":
			return tools.Answer{Action: "accept", Content: map[string]any{"decision": permit.ChoiceAllowSession}}, nil
		case "3", "n", "no":
			return tools.Answer{Action: "accept", Content: map[string]any{"decision": permit.ChoiceDeny}}, nil
		case "4":
			fb, ferr := u.readFull(ctx, "What should the model do instead? ", true, nil)
			if ferr != nil {
				err = ferr
				break
			}
			return tools.Answer{Action: "accept", Content: map[string]any{"decision": permit.ChoiceDeny, permit.AnswerFeedback: strings.TrimSpace(fb)}}, nil
		}
		if err != nil {
			break
		}
		line, err = u.readFull(ctx, "Choose 1-4: ", true, permissionChoices)
	}
	switch {
	case errors.Is(err, ErrInterruptKey):
		u.keyInterrupt()
		return tools.Answer{Action: "cancel"}, nil
	case errors.Is(err, io.EOF):
		return tools.Answer{Action: "cancel"}, nil
	}
	return tools.Answer{Action: "cancel"}, err
}

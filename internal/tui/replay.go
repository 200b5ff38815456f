package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// Replay shows a resumed conversation as it went: the prompts, the
// replies (rendered in the full UI), one line per tool call with the
// first line of its result.
func (u *UI) Replay(msgs []llm.Message) {
	results := map[string]llm.Block{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == llm.ToolResultBlock {
				results[b.ToolUseID] = b
			}
		}
	}
	for _, m := range msgs {
		if m.Role == llm.User {
			if isToolResults(m) {
				continue
			}
			if t := strings.TrimSpace(m.TextOf()); t != "" {
				u.Printf("%s\n", u.style("2", "> "+strings.ReplaceAll(t, "\n", "\n  ")))
			}
			continue
		}
		if t := strings.TrimSpace(m.TextOf()); t != "" {
			if u.full != nil {
				u.full.println(u.full.md.render(t, u.full.width()))
			} else {
				u.Printf("%s\n", t)
			}
		}
		for _, b := range m.ToolUses() {
			status, mark := "(no result)", "●"
			if r, ok := results[b.ID]; ok {
				var texts []string
				for _, c := range r.Content {
					if c.Type == llm.TextBlock {
						texts = append(texts, c.Text)
					}
				}
				status = summarise(strings.Join(texts, "\n"))
				if r.IsError {
					status = firstLine(strings.Join(texts, "\n"))
					mark = u.style("31", mark)
				} else {
					mark = u.style("32", mark)
				}
			}
			u.Printf("%s %s\n  ⎿ %s\n", mark, CallLabel(b.Name, b.Input), status)
		}
	}
	u.Printf("%s\n", u.style("2", fmt.Sprintf("(resumed: %d message(s) above)", len(msgs))))
}

func isToolResults(m llm.Message) bool {
	for _, b := range m.Content {
		if b.Type == llm.ToolResultBlock {
			return true
		}
	}
	return false
}

func (f *full) width() int {
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	return f.live.width
}

// Pick asks the user to choose one of choices: with the arrow keys in
// the full UI, by number otherwise. It returns -1 when the user picks
// nothing (an empty answer, end of input, Ctrl-C).
func (u *UI) Pick(ctx context.Context, title string, choices []string) (int, error) {
	if len(choices) == 0 {
		return -1, nil
	}
	prompt := fmt.Sprintf("Choose 1-%d (Enter on an empty line to cancel): ", len(choices))
	if u.full != nil {
		u.Printf("%s\n", styleBold.Render(title))
		prompt = fmt.Sprintf("Choose 1-%d: ", len(choices))
	} else {
		var b strings.Builder
		b.WriteString(title + "\n")
		for i, c := range choices {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, c)
		}
		u.Printf("%s", b.String())
	}
	for {
		line, err := u.readChoice(ctx, prompt, choices)
		switch {
		case errors.Is(err, ErrInterruptKey), errors.Is(err, io.EOF):
			return -1, nil
		case err != nil:
			return -1, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			return -1, nil
		}
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(choices) {
			return n - 1, nil
		}
		u.Printf("Type a number from 1 to %d.\n", len(choices))
	}
}

// resume switches the chat to saved conversation id, or to one the user
// picks when id is empty, and shows it.
func (r *REPL) resume(ctx context.Context, id string) error {
	if r.Store == nil {
		return errors.New("conversations are not saved, so none can be resumed")
	}
	if id == "" {
		list, err := r.Store.List(r.Session.Cwd(), 20)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return fmt.Errorf("no saved conversation for %s", r.Session.Cwd())
		}
		var choices []string
		for _, s := range list {
			p := s.Prompt
			if p == "" {
				p = "(no prompt)"
			}
			choices = append(choices, fmt.Sprintf("%s · %d messages · %s", s.Modified.Local().Format("2006-01-02 15:04"), s.Messages, p))
		}
		i, err := r.UI.Pick(ctx, "Resume which conversation?", choices)
		if err != nil || i < 0 {
			return err
		}
		id = list[i].ID
	}
	conv, msgs, err := r.Store.Open(id)
	if err != nil {
		return err
	}
	r.Agent.SetMessages(msgs)
	r.Agent.SetStore(conv)
	r.UI.Replay(msgs)
	r.UI.Printf("Resumed conversation %s (%d messages).\n", conv.ID, len(msgs))
	return nil
}

// Resume is [REPL.Run]'s start for --resume without an id: the user picks
// a saved conversation, which is shown.
func (r *REPL) Resume(ctx context.Context, id string) error { return r.resume(ctx, id) }

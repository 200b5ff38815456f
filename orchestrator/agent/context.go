package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// Context management: when the next request would fill most of the
// model's context window, the agent first clears the content of old tool
// results (keeping the most recent ones), then, if that is not enough,
// replaces the oldest turns with a summary written by the model.
const (
	// contextThreshold is the share of the window that triggers clearing.
	contextThreshold = 0.8
	// keepToolResults is how many of the latest tool results stay intact.
	keepToolResults = 3
	// clearedToolResult replaces the content of a cleared tool result.
	clearedToolResult = "[This tool result was cleared to save context. Run the tool again if you need it.]"
	// summaryPrefix starts the message that stands for summarised turns.
	summaryPrefix = "Summary of the earlier part of this conversation:\n"
)

// estimateTokens guesses the tokens of a request: about four characters
// per token of its JSON.
func estimateTokens(req llm.Request) int {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, m := range req.Messages {
		b, _ := json.Marshal(m)
		n += len(b)
	}
	return n / 4
}

func (a *Agent) overBudget() bool {
	return float64(estimateTokens(a.request())) > contextThreshold*float64(a.cfg.ContextWindow)
}

// manageContext clears old tool results, then summarises old turns, while
// the conversation is over the threshold.
func (a *Agent) manageContext(ctx context.Context) error {
	if !a.overBudget() {
		return nil
	}
	if n := a.clearToolResults(); n > 0 {
		a.notice(fmt.Sprintf("Context is filling up: cleared %d old tool result(s).", n))
		if err := a.persistAll(); err != nil {
			return err
		}
		if !a.overBudget() {
			return nil
		}
	}
	summarised, err := a.summarise(ctx)
	if err != nil {
		return err
	}
	if summarised > 0 {
		a.notice(fmt.Sprintf("Context is filling up: summarised the %d oldest message(s).", summarised))
		return a.persistAll()
	}
	return nil
}

func (a *Agent) notice(msg string) {
	a.cfg.Logger.Info(msg)
	if a.cfg.Events.Notice != nil {
		a.cfg.Events.Notice(msg)
	}
}

func (a *Agent) persistAll() error {
	if a.cfg.Store == nil {
		return nil
	}
	return a.cfg.Store.Replace(a.Messages())
}

// clearToolResults replaces the content of every tool result but the
// latest keepToolResults and returns how many it cleared.
func (a *Agent) clearToolResults() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	var idx [][2]int
	for i, m := range a.messages {
		for j, b := range m.Content {
			if b.Type == llm.ToolResultBlock {
				idx = append(idx, [2]int{i, j})
			}
		}
	}
	cleared := 0
	for _, ij := range idx[:max(0, len(idx)-keepToolResults)] {
		b := &a.messages[ij[0]].Content[ij[1]]
		if len(b.Content) == 1 && b.Content[0].Text == clearedToolResult {
			continue
		}
		// Copy the message's content so earlier copies stay untouched.
		content := append([]llm.Block(nil), a.messages[ij[0]].Content...)
		content[ij[1]].Content = []llm.Block{llm.Text(clearedToolResult)}
		a.messages[ij[0]].Content = content
		cleared++
	}
	return cleared
}

// summarise asks the model to summarise the older half of the
// conversation, cut where a user prompt starts a turn (so no tool call is
// separated from its result), and puts the summary in front of that
// prompt. It returns how many messages it replaced.
func (a *Agent) summarise(ctx context.Context) (int, error) {
	msgs := a.Messages()
	return a.summariseBefore(ctx, msgs, olderHalf(msgs), "")
}

// olderHalf is where the older half of msgs ends: at a user prompt, so no
// tool call is separated from its result; 0 when there is no such place.
func olderHalf(msgs []llm.Message) int {
	cut := -1
	for i := len(msgs) / 2; i > 0; i-- {
		if isPrompt(msgs[i]) {
			cut = i
			break
		}
	}
	if cut <= 0 {
		for i := len(msgs)/2 + 1; i < len(msgs); i++ {
			if isPrompt(msgs[i]) {
				cut = i
				break
			}
		}
	}
	return max(cut, 0)
}

// summariseBefore replaces msgs[:cut] with a summary written by the model
// (following instructions, if any): in front of msgs[cut], or, when cut is
// the whole conversation, as a prompt the model acknowledges. It returns
// how many messages it replaced.
func (a *Agent) summariseBefore(ctx context.Context, msgs []llm.Message, cut int, instructions string) (int, error) {
	if cut <= 0 {
		return 0, nil
	}
	var transcript strings.Builder
	for _, m := range msgs[:cut] {
		renderForSummary(&transcript, m)
	}
	ask := "Summarise this conversation between a user and a coding assistant:\n\n" + transcript.String()
	if instructions != "" {
		ask += "\n\nWhen summarising, follow these instructions: " + instructions
	}
	resp, err := a.model().Stream(ctx, llm.Request{
		System:    summarySystem,
		MaxTokens: 4096,
		Messages:  []llm.Message{{Role: llm.User, Content: []llm.Block{llm.Text(ask)}}},
	}, llm.Handler{OnRetry: a.cfg.Events.Retry})
	if err != nil {
		return 0, fmt.Errorf("summarising old turns: %w", err)
	}
	a.mu.Lock()
	a.usage = a.usage.Add(resp.Usage)
	a.mu.Unlock()
	summary := strings.TrimSpace(resp.Message.TextOf())
	if summary == "" {
		return 0, nil
	}
	if cut == len(msgs) {
		a.SetMessages([]llm.Message{
			{Role: llm.User, Content: []llm.Block{llm.Text(summaryPrefix + summary)}},
			{Role: llm.Assistant, Content: []llm.Block{llm.Text(compactedReply)}},
		})
		return cut, nil
	}
	first := msgs[cut]
	first.Content = append([]llm.Block{llm.Text(summaryPrefix + summary)}, first.Content...)
	out := append([]llm.Message{first}, msgs[cut+1:]...)
	a.SetMessages(out)
	return cut, nil
}

// compactedReply is the assistant's turn after a conversation compacted
// whole (/compact): the next prompt then follows an assistant message.
const compactedReply = "I have the summary of our conversation so far and will continue from it."

// Compact replaces the whole conversation with a summary written by the
// model, following instructions if given (/compact). It returns how many
// messages the summary stands for.
func (a *Agent) Compact(ctx context.Context, instructions string) (int, error) {
	msgs := a.Messages()
	if len(msgs) == 0 {
		return 0, nil
	}
	n, err := a.summariseBefore(ctx, msgs, len(msgs), instructions)
	if err != nil {
		return 0, err
	}
	return n, a.persistAll()
}

// compactForRetry makes room after the model refused the request as too
// long: old tool results cleared, the older half summarised. It reports
// whether anything changed.
func (a *Agent) compactForRetry(ctx context.Context) (bool, error) {
	cleared := a.clearToolResults()
	msgs := a.Messages()
	// The current prompt and what followed it stay; what came before is
	// summarised.
	cut := 0
	for i := len(msgs) - 1; i > 0; i-- {
		if isPrompt(msgs[i]) {
			cut = i
			break
		}
	}
	n, err := a.summariseBefore(ctx, msgs, cut, "")
	if err != nil {
		return false, err
	}
	if cleared == 0 && n == 0 {
		return false, nil
	}
	a.notice(fmt.Sprintf("The conversation was too long for the model: cleared %d old tool result(s) and summarised %d message(s); trying again.", cleared, n))
	return true, a.persistAll()
}

const summarySystem = "You write summaries of coding sessions so the work can continue without the full history. " +
	"Keep what matters for continuing: the user's goals and requests, decisions made, files read or changed and why, " +
	"commands run and their outcomes, errors met and how they were handled, and what remains to be done. " +
	"Be concise and factual; use short bullet points."

// isPrompt reports whether m is a user message that is not tool results.
func isPrompt(m llm.Message) bool {
	if m.Role != llm.User {
		return false
	}
	for _, b := range m.Content {
		if b.Type == llm.ToolResultBlock {
			return false
		}
	}
	return true
}

func renderForSummary(w *strings.Builder, m llm.Message) {
	for _, b := range m.Content {
		switch b.Type {
		case llm.TextBlock:
			fmt.Fprintf(w, "%s: %s\n", m.Role, b.Text)
		case llm.ToolUseBlock:
			fmt.Fprintf(w, "assistant called %s %s\n", b.Name, truncate(string(b.Input), 500))
		case llm.ToolResultBlock:
			var parts []string
			for _, c := range b.Content {
				if c.Type == llm.TextBlock {
					parts = append(parts, c.Text)
				}
			}
			status := "result"
			if b.IsError {
				status = "error"
			}
			fmt.Fprintf(w, "tool %s: %s\n", status, truncate(strings.Join(parts, "\n"), 1000))
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/tools"
)

var _ tools.PermissionAsker = (*UI)(nil)

// questionLiveRows is the rows of the live area under a question besides
// its choices: the hint, the prompt, the spinner, the mode and a spare.
const questionLiveRows = 5

// fitPreview cuts a question's preview lines (shown after a four-column
// margin) to rows rows of a screen width columns wide, saying how many
// lines were left out; at least one line is kept.
func fitPreview(lines []string, rows, width int) []string {
	total := 0
	for _, l := range lines {
		total += lineRows("    "+l, width)
	}
	if total <= rows {
		return lines
	}
	var out []string
	used := 1 // the count line
	for _, l := range lines {
		n := lineRows("    "+l, width)
		if used+n > rows && len(out) > 0 {
			break
		}
		out = append(out, l)
		used += n
	}
	return append(out, styleDim.Render(fmt.Sprintf("… %d more line(s) of the change", len(lines)-len(out))))
}

// textRows is the rows s takes on a screen width columns wide.
func textRows(s string, width int) int {
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		n += lineRows(l, width)
	}
	return n
}

// size is the terminal's columns and rows.
func (l *liveState) size() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.width, l.height
}

// errEscape is a form read ended with Esc: at a permission prompt it
// refuses the call, at another form it declines it.
var errEscape = errors.New("escape key at a form")

// AskPermission implements tools.PermissionAsker. The full UI shows the
// call (found by its id among the running ones) with its diff (file
// changes) or command, why it is asked, and the choices, picked with the
// arrow keys or by number; Esc refuses. A Feedback choice asks what the
// model should do instead. Plain lines put the question as a numbered
// form ([UI.Ask]). While the question is on screen the spinner's clocks
// stand still.
func (u *UI) AskPermission(ctx context.Context, q *tools.PermissionQuestion) (tools.PermissionAnswer, error) {
	if u.full == nil {
		msg, schema := q.Form()
		ans, err := u.Ask(ctx, msg, schema)
		return q.FormAnswer(ans), err
	}
	u.askMu.Lock()
	defer u.askMu.Unlock()
	f := u.full
	f.live.mu.Lock()
	f.live.pause()
	var label string
	call := f.live.calls[q.CallID]
	if call != nil {
		label = call.label
		call.label = "" // not drawn while asked about
	}
	f.live.mu.Unlock()
	defer func() {
		f.live.mu.Lock()
		if call != nil {
			call.label = label
		}
		f.live.resume()
		f.live.mu.Unlock()
	}()
	if label == "" {
		label = CallLabel(q.Tool, q.Input)
	}

	title := "\n" + styleBold.Render("Allow "+label+"?") + "\n"
	diff := proposedDiff(q.Tool, q.Input, q.Dir)
	// What the call is about first (the host, the paths), then why it is
	// asked, then the command quoted: every part from the call made
	// visible (tools.Visible), the command's lines each after a margin,
	// so nothing in it reads as the prompt's own words.
	var rest strings.Builder
	subject := q.Subject()
	if len(diff) > 0 {
		subject = slices.DeleteFunc(subject, func(s string) bool { return !strings.HasPrefix(s, "Connects to: ") })
	}
	for _, l := range subject {
		rest.WriteString(l + "\n")
	}
	rest.WriteString(styleDim.Render("Why you are asked: "+tools.Visible(q.Reason)) + "\n")
	if q.Command != "" {
		rest.WriteString("The command, quoted:\n" + tools.QuotedCommand(q.Command, 0) + "\n")
	}
	// The title and the choices stay on screen: the preview is what is
	// cut.
	width, height := f.live.size()
	used := textRows(title, width) + textRows(rest.String(), width) + len(q.Choices) + questionLiveRows
	var b strings.Builder
	b.WriteString(title)
	for _, l := range fitPreview(diff, height-used, width) {
		b.WriteString("    " + l + "\n")
	}
	b.WriteString(rest.String())
	// The question carries what a command or the model chose (a host a
	// command connects to, a command line): nothing in it drives the
	// terminal (terminalSafe).
	u.Printf("%s", terminalSafe(b.String()))

	labels := make([]string, len(q.Choices))
	for i, c := range q.Choices {
		labels[i] = terminalSafe(tools.Visible(c.Label))
	}
	prompt := "Choose 1-" + strconv.Itoa(len(labels)) + ": "
	for {
		line, err := u.readFullMsg(ctx, readMsg{prompt: prompt, form: true, choices: labels, digits: true})
		switch {
		case errors.Is(err, errEscape):
			return tools.PermissionAnswer{Choice: tools.ChoiceDeny}, nil
		case errors.Is(err, ErrInterruptKey):
			u.keyInterrupt()
			return tools.PermissionAnswer{}, nil
		case errors.Is(err, io.EOF):
			return tools.PermissionAnswer{}, nil
		case err != nil:
			return tools.PermissionAnswer{}, err
		}
		c, ok := pickChoice(q.Choices, line)
		if !ok {
			continue
		}
		if !c.Feedback {
			return tools.PermissionAnswer{Choice: c.ID}, nil
		}
		fb, err := u.readFull(ctx, "What should the model do instead? ", true, nil)
		switch {
		case errors.Is(err, errEscape):
			return tools.PermissionAnswer{Choice: c.ID}, nil
		case err != nil:
			return tools.PermissionAnswer{}, nil
		}
		return tools.PermissionAnswer{Choice: c.ID, Feedback: strings.TrimSpace(fb)}, nil
	}
}

// pickChoice reads an answer to a permission prompt: a choice's number,
// y (the first choice) or n (the first refusal).
func pickChoice(choices []tools.PermissionChoice, line string) (tools.PermissionChoice, bool) {
	s := strings.ToLower(strings.TrimSpace(line))
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(choices) {
		return choices[n-1], true
	}
	switch s {
	case "y", "yes":
		return choices[0], true
	case "n", "no":
		for _, c := range choices {
			if c.ID == tools.ChoiceDeny {
				return c, true
			}
		}
	}
	return tools.PermissionChoice{}, false
}

// pause stops the spinner's clocks (the turn's and each call's) while the
// user answers a question; resume starts them again where they stood.
// Both are called with l.mu held.
func (l *liveState) pause() {
	if l.paused++; l.paused == 1 {
		l.pausedAt = time.Now()
	}
}

func (l *liveState) resume() {
	if l.paused == 0 {
		return
	}
	if l.paused--; l.paused > 0 {
		return
	}
	d := time.Since(l.pausedAt)
	l.since = l.since.Add(d)
	for _, c := range l.calls {
		c.started = c.started.Add(d)
	}
	l.pausedAt = time.Time{}
}

// now is the time the spinner's clocks read: when they were paused, if
// they are.
func (l *liveState) now() time.Time {
	if l.paused > 0 {
		return l.pausedAt
	}
	return time.Now()
}

// Package term is chat's terminal front end: streamed text, one line per
// tool call with a spinner while it runs, the permission prompt (a
// tools.Asker: allow once / allow for the session / deny), line editing
// with history on a terminal (golang.org/x/term) and plain line reading
// otherwise, and the interactive loop with its slash commands and Ctrl-C
// handling ([REPL]).
package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	xterm "golang.org/x/term"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/tools"
)

// UI writes the conversation to a terminal (or any writer) and reads the
// user's lines and answers.
type UI struct {
	out io.Writer
	tty bool // out and in are a terminal: colours, spinner, line editing

	in     io.Reader
	fd     int
	term   *xterm.Terminal
	reader *bufio.Reader
	readMu sync.Mutex

	mu       sync.Mutex
	running  map[string]*running // calls in progress, by id
	order    []string
	midLine  bool // streamed text did not end with a newline
	stopSpin chan struct{}
}

type running struct {
	label    string
	progress string
	started  time.Time
}

// New makes a UI reading in and writing out. Line editing, history and the
// spinner are used when both are the same terminal (*os.File ttys).
func New(in io.Reader, out io.Writer) *UI {
	u := &UI{in: in, out: out, running: map[string]*running{}}
	fin, ok1 := in.(*os.File)
	fout, ok2 := out.(*os.File)
	if ok1 && ok2 && xterm.IsTerminal(int(fin.Fd())) && xterm.IsTerminal(int(fout.Fd())) {
		u.tty = true
		u.fd = int(fin.Fd())
		u.term = xterm.NewTerminal(struct {
			io.Reader
			io.Writer
		}{in, out}, "")
	} else {
		u.reader = bufio.NewReader(in)
	}
	return u
}

// TTY reports whether the UI drives a terminal.
func (u *UI) TTY() bool { return u.tty }

// ReadLine shows prompt and reads one line; io.EOF at end of input (or
// Ctrl-D / Ctrl-C at an empty terminal prompt).
func (u *UI) ReadLine(prompt string) (string, error) {
	u.readMu.Lock()
	defer u.readMu.Unlock()
	if u.tty {
		state, err := xterm.MakeRaw(u.fd)
		if err != nil {
			return "", err
		}
		defer func() { _ = xterm.Restore(u.fd, state) }()
		u.term.SetPrompt(prompt)
		if w, _, err := xterm.GetSize(u.fd); err == nil {
			_ = u.term.SetSize(w, 1000)
		}
		return u.term.ReadLine()
	}
	fmt.Fprint(u.out, prompt)
	line, err := u.reader.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	if f, ok := u.in.(*os.File); !ok || !xterm.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(u.out) // piped input is not echoed: end the prompt's line
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (u *UI) style(code, s string) string {
	if !u.tty {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Printf writes a line for the user, ending streamed text first.
func (u *UI) Printf(format string, args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.endLineLocked()
	fmt.Fprintf(u.out, format, args...)
}

func (u *UI) endLineLocked() {
	if u.midLine {
		fmt.Fprintln(u.out)
		u.midLine = false
	}
}

// Events returns the agent events that draw the conversation.
func (u *UI) Events() agent.Events {
	return agent.Events{
		Text:         u.text,
		ToolStart:    u.toolStart,
		ToolProgress: u.toolProgress,
		ToolEnd:      u.toolEnd,
		Notice:       func(msg string) { u.Printf("%s\n", u.style("2", "· "+msg)) },
	}
}

func (u *UI) text(delta string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	fmt.Fprint(u.out, delta)
	u.midLine = !strings.HasSuffix(delta, "\n")
}

// CallLabel is the one-line description of a call: the tool and its key
// argument, e.g. Bash(go test ./...).
func CallLabel(name string, input []byte) string {
	if arg := agent.KeyArgument(input); arg != "" {
		return name + "(" + arg + ")"
	}
	return name
}

func (u *UI) toolStart(c orchestrator.Call) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.endLineLocked()
	label := CallLabel(c.Name, c.Input)
	u.running[c.ID] = &running{label: label, started: time.Now()}
	u.order = append(u.order, c.ID)
	if !u.tty {
		fmt.Fprintf(u.out, "● %s\n", label)
		return
	}
	if u.stopSpin == nil {
		u.stopSpin = make(chan struct{})
		go u.spin(u.stopSpin)
	}
}

func (u *UI) toolProgress(id string, p tools.ProgressUpdate) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if r := u.running[id]; r != nil {
		r.progress = p.Message
		if r.progress == "" && p.Total > 0 {
			r.progress = fmt.Sprintf("%.0f/%.0f", p.Progress, p.Total)
		}
	}
}

func (u *UI) toolEnd(out orchestrator.Outcome) {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := out.Call.ID
	r := u.running[id]
	delete(u.running, id)
	for i, o := range u.order {
		if o == id {
			u.order = append(u.order[:i], u.order[i+1:]...)
			break
		}
	}
	label := CallLabel(out.Call.Name, out.Call.Input)
	if r != nil {
		label = r.label
	}
	if u.tty {
		fmt.Fprint(u.out, "\r\x1b[K")
	}
	status := "done"
	mark := u.style("32", "●")
	switch {
	case out.Err != nil:
		status, mark = out.Err.Error(), u.style("31", "●")
	case out.Result != nil && out.Result.IsError:
		status, mark = firstLine(out.Result.Text), u.style("31", "●")
	case out.Result != nil:
		status = summarise(out.Result.Text)
	}
	if u.tty {
		fmt.Fprintf(u.out, "%s %s\n", mark, label)
	}
	fmt.Fprintf(u.out, "  ⎿ %s\n", status)
	if len(u.running) == 0 && u.stopSpin != nil {
		close(u.stopSpin)
		u.stopSpin = nil
	}
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spin redraws the status line of the running calls until stop closes.
func (u *UI) spin(stop chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		u.mu.Lock()
		if len(u.order) > 0 {
			r := u.running[u.order[0]]
			line := fmt.Sprintf("%s %s", spinFrames[i%len(spinFrames)], r.label)
			if len(u.order) > 1 {
				line += fmt.Sprintf(" (+%d more)", len(u.order)-1)
			}
			if r.progress != "" {
				line += " · " + r.progress
			}
			line += fmt.Sprintf(" · %ds", int(time.Since(r.started).Seconds()))
			if w, _, err := xterm.GetSize(u.fd); err == nil && w > 4 && len([]rune(line)) > w-1 {
				line = string([]rune(line)[:w-2]) + "…"
			}
			fmt.Fprintf(u.out, "\r\x1b[K%s", line)
		}
		u.mu.Unlock()
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// summarise describes a result's size in one line.
func summarise(text string) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return "done"
	}
	n := strings.Count(text, "\n") + 1
	if n == 1 {
		return firstLine(text)
	}
	return fmt.Sprintf("%s (%d lines)", firstLine(text), n)
}

// Ask implements tools.Asker on the terminal: it shows the message and
// asks for each property of the form. A property with choices (oneOf
// consts or an enum, as permission questions have) is answered by number
// or by the first letter of a choice; a boolean by y or n; anything else
// as text. An empty answer, end of input or a cancelled context declines.
func (u *UI) Ask(ctx context.Context, message string, schema map[string]any) (tools.Answer, error) {
	u.mu.Lock()
	u.endLineLocked()
	if u.tty {
		fmt.Fprint(u.out, "\r\x1b[K")
	}
	fmt.Fprintf(u.out, "\n%s\n", u.style("1", message))
	u.mu.Unlock()
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	content := map[string]any{}
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		v, ok, err := u.askOne(ctx, name, p)
		if err != nil || !ok {
			if ctx.Err() != nil {
				return tools.Answer{Action: "cancel"}, ctx.Err()
			}
			return tools.Answer{Action: "decline"}, nil
		}
		content[name] = v
	}
	return tools.Answer{Action: "accept", Content: content}, nil
}

type choice struct{ value, title string }

func choicesOf(p map[string]any) []choice {
	var out []choice
	if one, ok := p["oneOf"].([]any); ok {
		for _, o := range one {
			if m, ok := o.(map[string]any); ok {
				v := fmt.Sprint(m["const"])
				t, _ := m["title"].(string)
				if t == "" {
					t = v
				}
				out = append(out, choice{v, t})
			}
		}
	}
	if enum, ok := p["enum"].([]any); ok {
		for _, e := range enum {
			out = append(out, choice{fmt.Sprint(e), fmt.Sprint(e)})
		}
	}
	return out
}

// askOne reads one property's answer; ok is false when the user gave none.
func (u *UI) askOne(ctx context.Context, name string, p map[string]any) (any, bool, error) {
	title, _ := p["title"].(string)
	if title == "" {
		title = name
	}
	typ, _ := p["type"].(string)
	choices := choicesOf(p)
	prompt := title + ": "
	if len(choices) > 0 {
		var b strings.Builder
		for i, c := range choices {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, c.title)
		}
		u.Printf("%s", b.String())
		prompt = fmt.Sprintf("Choose 1-%d: ", len(choices))
	} else if typ == "boolean" {
		prompt = title + " [y/n]: "
	}
	for {
		line, err := u.readAnswer(ctx, prompt)
		if err != nil {
			return nil, false, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			return nil, false, nil
		}
		switch {
		case len(choices) > 0:
			if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(choices) {
				return choices[n-1].value, true, nil
			}
			if c, ok := matchChoice(choices, line); ok {
				return c.value, true, nil
			}
		case typ == "boolean":
			switch strings.ToLower(line) {
			case "y", "yes", "true":
				return true, true, nil
			case "n", "no", "false":
				return false, true, nil
			}
		case typ == "integer":
			if n, err := strconv.Atoi(line); err == nil {
				return n, true, nil
			}
		case typ == "number":
			if f, err := strconv.ParseFloat(line, 64); err == nil {
				return f, true, nil
			}
		default:
			return line, true, nil
		}
		u.Printf("%q is not one of the answers; try again (empty to decline).\n", line)
	}
}

// matchChoice accepts a choice's value, or a prefix of its title that only
// it has ("a" for "Allow once" is ambiguous when "Allow for this session"
// is there, so y/yes picks the first choice and n/no the last).
func matchChoice(choices []choice, s string) (choice, bool) {
	low := strings.ToLower(s)
	for _, c := range choices {
		if strings.EqualFold(c.value, s) || strings.EqualFold(c.title, s) {
			return c, true
		}
	}
	switch low {
	case "y", "yes":
		return choices[0], true
	case "n", "no":
		return choices[len(choices)-1], true
	}
	var found []choice
	for _, c := range choices {
		if strings.HasPrefix(strings.ToLower(c.title), low) {
			found = append(found, c)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return choice{}, false
}

// readAnswer reads a line, giving up when ctx ends.
func (u *UI) readAnswer(ctx context.Context, prompt string) (string, error) {
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := u.ReadLine(prompt)
		ch <- res{l, err}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

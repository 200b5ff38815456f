package tui

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	xterm "golang.org/x/term"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
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
	keys   *keyWatch // the terminal's input, counting Ctrl-C
	reader *bufio.Reader
	readMu sync.Mutex
	// pending is a read abandoned by a cancelled caller; the next read
	// takes its line. Guarded by readMu.
	pending chan lineResult

	askMu sync.Mutex // one form at a time

	mu      sync.Mutex
	running map[string]*running // calls in progress, by id
	order   []string
	midLine bool // streamed text did not end with a newline
	// inThinking is set while extended thinking streams.
	inThinking bool
	asking     bool   // a form is on screen: the spinner keeps still
	onKey      func() // Ctrl-C typed at a form; see SetInterruptKey
	// keyEarly is a Ctrl-C (or Esc) typed in the full UI after a line was
	// sent but before the turn it starts set its handler: the handler
	// takes it when set, a new prompt drops it.
	keyEarly bool
	stopSpin chan struct{}

	// full, when set, is the full terminal UI that draws everything
	// (see NewFull); the fields above about the screen are then unused.
	full *full
}

type running struct {
	label    string
	progress string
	started  time.Time
	name     string
	input    []byte
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
		u.keys = &keyWatch{r: in}
		u.term = xterm.NewTerminal(struct {
			io.Reader
			io.Writer
		}{u.keys, out}, "")
	} else {
		u.reader = bufio.NewReader(in)
	}
	return u
}

// TTY reports whether the UI drives a terminal.
func (u *UI) TTY() bool { return u.tty }

func (u *UI) style(code, s string) string {
	if !u.tty {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Printf writes a line for the user, ending streamed text first.
func (u *UI) Printf(format string, args ...any) {
	if u.full != nil {
		s := fmt.Sprintf(format, args...)
		if s == "" {
			u.full.println("")
			return
		}
		u.full.println(strings.TrimSuffix(s, "\n"))
		return
	}
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
		Retry:        u.retry,
		Thinking:     u.thinking,
		Usage: func(run llm.Usage) {
			if u.full != nil {
				u.full.usage(run)
			}
		},
		CallUsage: func(call llm.Usage) {
			if u.full != nil {
				u.full.callUsage(call)
			}
		},
	}
}

// retry says why the model call failed and when it is made again.
func (u *UI) retry(r llm.RetryInfo) {
	msg := fmt.Sprintf("%s (%v)", r, firstLine(r.Err.Error()))
	if r.Discarded {
		msg = "The reply was cut off. " + msg
	}
	if f := u.full; f != nil {
		f.live.mu.Lock()
		if r.Discarded {
			// The retry streams the reply again.
			f.live.text.Reset()
		}
		f.live.status = r.String()
		f.live.mu.Unlock()
	}
	u.Printf("%s\n", u.style("33", "· "+msg))
}

// thinking shows the model's extended thinking, dimmed.
func (u *UI) thinking(delta string) {
	if u.full != nil {
		u.full.thinkingText(delta)
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.inThinking {
		u.endLineLocked()
		fmt.Fprint(u.out, u.style("2", "✻ Thinking…")+"\n")
		u.inThinking = true
	}
	fmt.Fprint(u.out, u.style("2", delta))
	u.midLine = !strings.HasSuffix(delta, "\n")
}

func (u *UI) text(delta string) {
	if u.full != nil {
		u.full.text(delta)
		return
	}
	u.mu.Lock()
	if u.inThinking {
		u.inThinking = false
		u.endLineLocked()
	}
	u.mu.Unlock()
	u.mu.Lock()
	defer u.mu.Unlock()
	fmt.Fprint(u.out, delta)
	u.midLine = !strings.HasSuffix(delta, "\n")
}

// CallLabel is the one-line description of a call: the tool and its key
// argument, e.g. Bash(go test ./...).
func CallLabel(name string, input []byte) string {
	if name == "TodoWrite" {
		return "Update Todos" // the list is drawn below the line
	}
	if arg := agent.KeyArgument(input); arg != "" {
		return name + "(" + arg + ")"
	}
	return name
}

func (u *UI) toolStart(c orchestrator.Call) {
	if f := u.full; f != nil {
		f.outMu.Lock()
		f.flushLocked()
		f.outMu.Unlock()
		f.live.mu.Lock()
		f.live.calls[c.ID] = &running{label: callLabelIn(c.Name, c.Input, f.cwd()), started: time.Now(), name: c.Name, input: c.Input}
		f.live.order = append(f.live.order, c.ID)
		f.live.mu.Unlock()
		return
	}
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
	calls, mu := u.running, &u.mu
	if f := u.full; f != nil {
		calls, mu = f.live.calls, &f.live.mu
	}
	mu.Lock()
	defer mu.Unlock()
	if r := calls[id]; r != nil {
		r.progress = p.Message
		if r.progress == "" && p.Total > 0 {
			r.progress = fmt.Sprintf("%.0f/%.0f", p.Progress, p.Total)
		}
	}
}

func (u *UI) toolEnd(out orchestrator.Outcome) {
	if u.full != nil {
		u.toolEndFull(out)
		return
	}
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
	case out.Persisted != nil:
		status = fmt.Sprintf("%s of output, saved to %s", tools.FormatSize(out.Persisted.Size), out.Persisted.Path)
		if whole, ok := persistedText(out.Persisted.Path); ok {
			status = summarise(whole) + " · saved to " + out.Persisted.Path
		}
	case out.Call.Name == "TodoWrite" && out.Result != nil:
		status = strings.Join(todoLines(out.Call.Input, false), "\n    ")
	case out.Call.Name == "Read" && out.Result != nil && len(out.Result.Extra) == 0:
		status = summarise(readText(out.Result.Text))
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

// toolEndFull prints a finished call in the full UI: its line, its status
// and what it changed or printed.
func (u *UI) toolEndFull(out orchestrator.Outcome) {
	f := u.full
	id := out.Call.ID
	cwd := f.cwd()
	f.live.mu.Lock()
	label := callLabelIn(out.Call.Name, out.Call.Input, cwd)
	if r := f.live.calls[id]; r != nil {
		label = r.label
	}
	delete(f.live.calls, id)
	for i, o := range f.live.order {
		if o == id {
			f.live.order = append(f.live.order[:i], f.live.order[i+1:]...)
			break
		}
	}
	f.live.mu.Unlock()
	mark := styleGreen.Render("●")
	if out.Err != nil || out.Result != nil && out.Result.IsError {
		mark = styleRed.Render("●")
	}
	status, detail := resultDetail(out, cwd)
	if status == "" && len(detail) > 0 {
		status, detail = detail[0], detail[1:]
	}
	whole := outputText(out)
	// What a tool returned (and the call's own line, the model's) reaches
	// the terminal without what would drive it (terminalSafe).
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n  ⎿ %s", mark, styleBold.Render(terminalSafe(label)), terminalSafe(status))
	head := b.String()
	for _, l := range detail {
		b.WriteString("\n    " + terminalSafe(l))
	}
	var blk block
	if expandable(out, whole, status, detail) {
		// Cut short: the transcript (Ctrl-O) shows all of it.
		b.WriteString("\n    " + styleDim.Render("(ctrl+o to expand)"))
		var l strings.Builder
		l.WriteString(head)
		width := f.width()
		for _, line := range expandLines(whole) {
			l.WriteString("\n" + wrapIndented(terminalSafe(line), "    ", width))
		}
		blk.long = l.String()
	}
	blk.short = b.String()
	f.outMu.Lock()
	defer f.outMu.Unlock()
	f.flushLocked()
	f.emitLocked(blk)
}

// expandable reports whether a finished call's whole text says more than
// what its lines show (so Ctrl-O has something to show): a file change's
// diff says it all unless it failed, and a checklist is drawn whole.
func expandable(out orchestrator.Outcome, whole, status string, detail []string) bool {
	failed := out.Err != nil || out.Result != nil && out.Result.IsError
	if whole == "" || changesFiles(out.Call.Name) && !failed || out.Call.Name == "TodoWrite" {
		return false
	}
	n := strings.Count(whole, "\n") + 1
	if n == 1 && len(detail) == 0 {
		return ansi.Strip(status) != strings.TrimSpace(whole)
	}
	return n > len(detail)
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
		if len(u.order) > 0 && !u.asking {
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

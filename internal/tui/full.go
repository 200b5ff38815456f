package tui

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// full is the full terminal UI: a bubbletea program that owns the
// terminal (raw mode, bracketed paste) for the whole session. Finished
// output (rendered Markdown, tool lines with their diffs and output) is
// printed above it into the scrollback; below, it draws what is live:
// the reply streaming in, the running tools, a spinner with the elapsed
// time and tokens, and the input editor (or a form's choices).
//
// The UI's goroutines print with [full.println] under outMu (so output
// keeps its order) and never while holding live.mu; the program's event
// loop takes only live.mu.
type full struct {
	prog  *tea.Program
	outMu sync.Mutex
	ended bool // guarded by outMu
	done  chan struct{}
	md    markdown
	cwd   func() string
	// histFile keeps the prompts across sessions; "" keeps none.
	histFile string

	live liveState

	// fullscreen draws the whole conversation in the alternate screen
	// (see FullOptions.FullScreen, UI.SetFullScreen); otherwise it goes to
	// the scrollback. fsShown keeps what full-screen mode showed since it
	// was turned on, for the scrollback when it is turned off. Both are
	// guarded by outMu (the program keeps its own copy, fullModel.fs).
	fullscreen bool
	fsShown    []string
	// restore gives the terminal back as it was before NewFull.
	restore func()
	// holding is set while the transcript covers the inline screen (or
	// full-screen mode has just ended): what is printed meanwhile waits in
	// held (guarded by outMu).
	holding bool
	held    []string
}

// maxExpand bounds the lines of one expanded output.
const maxExpand = 2000

// expandLines is text's lines, at most maxExpand of them.
func expandLines(text string) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > maxExpand {
		lines = append(lines[:maxExpand], fmt.Sprintf("… %d more line(s)", len(lines)-maxExpand))
	}
	return lines
}

// thinkingShown is how many lines of thinking the scrollback keeps before
// Ctrl-O expands it.
const thinkingShown = 6

// liveState is what the program draws below the scrollback.
type liveState struct {
	mu       sync.Mutex
	width    int
	height   int             // the terminal's rows
	text     strings.Builder // the reply streaming in, not yet printed
	thinking bool            // text holds thinking, shown dimmed
	busy     bool            // a prompt was sent and its turn has not ended
	since    time.Time
	outChars int    // characters streamed this turn (tokens ≈ /4)
	status   string // the last retry notice of this turn
	// haveUsage is set once the provider reported the turn's usage:
	// inTokens and outTokens are its latest counts, and the characters
	// streamed since (outChars-usageChars) are estimated on top.
	haveUsage           bool
	inTokens, outTokens int64
	// callTokens is the current model call's context as reported: the gauge.
	callTokens int64
	usageChars int
	calls      map[string]*running
	order      []string
	// paused counts the questions on screen; while it is above zero the
	// clocks stand at pausedAt (see pause).
	paused   int
	pausedAt time.Time
	// window is the model's context size (0: unknown), for the gauge.
	window int
	// commands are what the slash menu offers (keys.go); mode is the
	// permission mode shown, nextMode what Shift+Tab calls.
	commands []Command
	mode     func() string
	nextMode func()
}

// FullOptions configure [NewFull].
type FullOptions struct {
	// Cwd is the working directory (permission prompts read the file an
	// edit would change); nil means the process's.
	Cwd func() string
	// HistoryFile keeps the prompts typed, across sessions; "" keeps none.
	HistoryFile string
	// FullScreen draws the session in the terminal's alternate screen: the
	// conversation in a scrollable view above the input, instead of
	// printing it into the scrollback.
	FullScreen bool
}

// NewFull makes a UI that drives the terminal in and out with the full
// terminal UI; both must be the same terminal. Call [UI.Close] at the end.
func NewFull(in, out *os.File, opts FullOptions) *UI {
	u := &UI{in: in, out: out, tty: true, running: map[string]*running{}}
	f := &full{done: make(chan struct{}), cwd: opts.Cwd, histFile: opts.HistoryFile, fullscreen: opts.FullScreen}
	f.live.calls = map[string]*running{}
	f.live.width, f.live.height = 80, 24
	if f.cwd == nil {
		f.cwd = func() string { d, _ := os.Getwd(); return d }
	}
	m := newFullModel(u, f)
	// The terminal is taken now, with what was typed before (see
	// takeTerminal): the model reads it first.
	m.typed, f.restore = takeTerminal(in)
	f.prog = tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithoutSignalHandler(), tea.WithoutCatchPanics())
	u.full = f
	go func() {
		defer close(f.done)
		if _, err := f.prog.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "terminal UI: %v\n", err)
		}
	}()
	return u
}

// Close ends the full terminal UI, restoring the terminal; a no-op for a
// line UI.
func (u *UI) Close() {
	f := u.full
	if f == nil {
		return
	}
	f.outMu.Lock()
	f.flushLocked()
	f.ended = true
	held := f.held
	f.held = nil
	f.outMu.Unlock()
	f.prog.Quit()
	<-f.done
	f.restore()
	// What the transcript held back goes to the scrollback after all.
	for _, s := range held {
		fmt.Fprintln(os.Stdout, s)
	}
}

// Full reports whether u is the full terminal UI.
func (u *UI) Full() bool { return u.full != nil }

// FullScreen reports whether the full terminal UI is in full-screen mode.
func (u *UI) FullScreen() bool {
	if u.full == nil {
		return false
	}
	u.full.outMu.Lock()
	defer u.full.outMu.Unlock()
	return u.full.fullscreen
}

// SetFullScreen turns the full terminal UI's full-screen mode on or off
// (/fullscreen); a line UI has none.
func (u *UI) SetFullScreen(on bool) {
	if u.full != nil {
		u.full.setFullScreen(on)
	}
}

// Writer is an io.Writer whose complete lines are printed for the user,
// dimmed: in the full UI, where writing to the terminal directly would
// tear its screen, the place for warnings and logs.
func (u *UI) Writer() io.Writer { return &lineWriter{u: u} }

type lineWriter struct {
	u   *UI
	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		w.u.Printf("%s\n", w.u.style("2", line))
	}
	return len(p), nil
}

// println prints s above the live area (after any reply text streamed so
// far).
func (f *full) println(s string) {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	f.flushLocked()
	f.printLocked(s)
}

func (f *full) printLocked(s string) { f.emitLocked(block{short: s}) }

// emitLocked shows a finished block: printed into the scrollback (or held
// while the transcript covers the screen) and kept in the transcript, or
// in full-screen mode only the latter.
func (f *full) emitLocked(b block) {
	select {
	case <-f.done:
		f.ended = true
	default:
	}
	if f.ended {
		fmt.Fprintln(os.Stdout, b.short)
		return
	}
	// Send, unlike Program.Println, gives up if the program has ended.
	switch {
	case f.fullscreen:
		f.fsShown = appendBounded(f.fsShown, b.short)
	default:
		if f.holding {
			f.held = appendBounded(f.held, b.short)
		} else {
			f.printAbove(b.short)
		}
	}
	f.prog.Send(blockMsg(b))
}

// printAbove prints s into the scrollback above the live area, in pieces
// the inline renderer can take: it makes room for printed lines by
// scrolling the screen up and inserting them above the live area, which
// works only while the lines and the live area fit on the screen
// together; more, and the live area (the reply's tail, the spinner) went
// to the scrollback and the block's end was lost. The live area is kept
// to liveRows rows, so pieces of printRows rows always fit. Called with
// outMu held, so pieces of different blocks never interleave.
func (f *full) printAbove(s string) {
	f.live.mu.Lock()
	width, height := f.live.width, f.live.height
	f.live.mu.Unlock()
	room := printRows(height)
	var piece []string
	rows := 0
	for _, line := range strings.Split(s, "\n") {
		n := lineRows(line, width)
		if rows+n > room && len(piece) > 0 {
			f.prog.Send(tea.Println(strings.Join(piece, "\n"))())
			piece, rows = nil, 0
		}
		piece = append(piece, line)
		rows += n
	}
	f.prog.Send(tea.Println(strings.Join(piece, "\n"))())
}

// printRows is how many rows one printed piece may take on a terminal of
// height rows: what the live area (liveRows) leaves, less one.
func printRows(height int) int {
	return max(1, height-liveRows(height)-1)
}

// liveRows bounds the live area's rows on a terminal of height rows: a
// third of the screen, at least three rows, stays for printed pieces.
func liveRows(height int) int {
	return max(1, height-max(3, height/3))
}

// lineRows is the rows a printed line takes at width columns, as the
// renderer counts them.
func lineRows(line string, width int) int {
	if w := lipgloss.Width(line); width > 0 && w > width {
		return 1 + w/width
	}
	return 1
}

// appendBounded appends s to what is kept for the scrollback, dropping
// the oldest beyond maxBlocks.
func appendBounded(kept []string, s string) []string {
	if len(kept) >= maxBlocks {
		kept = append(kept[:0], kept[len(kept)-maxBlocks+1:]...)
	}
	return append(kept, s)
}

// openTranscript covers the inline screen with the transcript: from now
// on what is printed is held until release.
func (f *full) openTranscript() {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	if f.holding || f.ended {
		return
	}
	f.holding = true
	f.prog.Send(transcriptMsg{})
}

// setFullScreen turns full-screen mode on or off. Turned off, what it
// showed is printed into the scrollback once the screen is back.
func (f *full) setFullScreen(on bool) {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	if on == f.fullscreen || f.ended {
		return
	}
	f.flushLocked()
	f.fullscreen = on
	if on {
		f.fsShown = nil
	} else {
		f.holding = true
		f.held = append(f.held, f.fsShown...)
		f.fsShown = nil
	}
	f.prog.Send(fullscreenMsg{on: on})
}

// release prints what was held while the transcript was open (or
// full-screen mode ended), once the screen is back.
func (f *full) release() {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	if f.fullscreen {
		// Full-screen mode came back meanwhile: the held lines wait for
		// its end with what it shows.
		f.fsShown = append(f.held, f.fsShown...)
		f.held = nil
		f.holding = false
		return
	}
	if len(f.held) > 0 && !f.ended {
		f.printAbove(strings.Join(f.held, "\n"))
		f.held = nil
	}
	f.holding = false
}

// flushLocked prints the streamed reply, rendered, and clears it.
func (f *full) flushLocked() {
	f.live.mu.Lock()
	// The model's text is as foreign as a tool's: a prompt-injected
	// model could print what drives the terminal (terminalSafe).
	text, thinking, width := terminalSafe(f.live.text.String()), f.live.thinking, f.live.width
	f.live.text.Reset()
	f.live.thinking = false
	f.live.mu.Unlock()
	if strings.TrimSpace(text) == "" {
		return
	}
	if thinking {
		style := styleDim.Italic(true)
		lines := strings.Split(strings.TrimSpace(text), "\n")
		var b block
		if len(lines) > thinkingShown {
			b.long = style.Render("✻ Thinking…\n" + strings.Join(expandLines(strings.TrimSpace(text)), "\n"))
			lines = append(lines[:thinkingShown], fmt.Sprintf("… %d more line(s) (ctrl+o to expand)", len(lines)-thinkingShown))
		}
		b.short = style.Render("✻ Thinking…\n" + strings.Join(lines, "\n"))
		f.emitLocked(b)
		return
	}
	f.printLocked(f.md.render(text, width))
}

// text adds streamed reply text (after printing the thinking before it).
func (f *full) text(delta string) {
	f.live.mu.Lock()
	thinking := f.live.thinking
	f.live.mu.Unlock()
	if thinking {
		f.outMu.Lock()
		f.flushLocked()
		f.outMu.Unlock()
	}
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	f.live.text.WriteString(delta)
	f.live.outChars += len(delta)
}

// thinkingText adds streamed extended thinking, shown dimmed.
func (f *full) thinkingText(delta string) {
	f.live.mu.Lock()
	switchKind := !f.live.thinking && strings.TrimSpace(f.live.text.String()) != ""
	f.live.mu.Unlock()
	if switchKind {
		f.outMu.Lock()
		f.flushLocked()
		f.outMu.Unlock()
	}
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	f.live.thinking = true
	f.live.text.WriteString(delta)
	f.live.outChars += len(delta)
}

// setBusy starts or ends the turn's spinner.
func (f *full) setBusy(busy bool) {
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	if busy && !f.live.busy {
		f.live.since = time.Now()
		f.live.outChars = 0
		f.live.status = ""
		f.live.haveUsage = false
		f.live.inTokens, f.live.outTokens, f.live.usageChars, f.live.callTokens = 0, 0, 0, 0
	}
	f.live.busy = busy
}

// usage takes the turn's usage as the provider reported it.
func (f *full) usage(run llm.Usage) {
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	f.live.haveUsage = true
	f.live.inTokens = run.InputTokens + run.CacheReadTokens + run.CacheWriteTokens
	f.live.outTokens = run.OutputTokens
	f.live.usageChars = f.live.outChars
}

// callUsage takes the current model call's usage: the context gauge's
// count, since the turn's sum counts the conversation once per call.
func (f *full) callUsage(call llm.Usage) {
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	f.live.callTokens = call.InputTokens + call.CacheReadTokens + call.CacheWriteTokens + call.OutputTokens
}

// tokensLine is the spinner's count: the provider's numbers once it
// reported some (with the text streamed since estimated on top), an
// estimate from the characters streamed until then.
func (l *liveState) tokensLine() string {
	if !l.haveUsage {
		return fmt.Sprintf("↓ %d tokens", (l.outChars+3)/4)
	}
	out := l.outTokens + int64((l.outChars-l.usageChars+3)/4)
	s := fmt.Sprintf("↓ %d tokens", out)
	if l.inTokens > 0 {
		s = fmt.Sprintf("↑ %d ↓ %d tokens", l.inTokens, out)
	}
	// The gauge is the last call's context (what the next call sends),
	// with the text streamed since its report estimated on top.
	if g := ContextGauge(l.callTokens+int64((l.outChars-l.usageChars+3)/4), l.window); g != "" && l.inTokens > 0 {
		s += " · " + g
	}
	return s
}

// The messages the UI sends the program.
type (
	// readMsg asks for a line: at the prompt, or a form's answer.
	readMsg struct {
		prompt  string
		form    bool
		choices []string
		// strict is a question that takes only its own keys (a digit
		// answers at once, arrows and Enter pick, Esc refuses): other
		// keys, typed perhaps for the prompt before the question showed,
		// go to the prompt's editor, and Enter after them queues that
		// text as a prompt rather than answering.
		strict bool
		// digits is a question whose choice's digit answers at once,
		// without Enter (a permission question of at most nine choices).
		digits bool
		ch     chan lineResult
	}
	// cancelReadMsg withdraws a read whose caller gave up.
	cancelReadMsg struct{ ch chan lineResult }
	tickMsg       time.Time
)

// readMsg asks the program for the read r.
func (f *full) readMsg(r readMsg) chan lineResult {
	ch := make(chan lineResult, 1)
	r.ch = ch
	f.prog.Send(r)
	return ch
}

// fullModel is the bubbletea model: the input editor and what is live.
type fullModel struct {
	u      *UI
	f      *full
	ta     textarea.Model
	frame  int
	height int

	read   *readMsg // the pending read, nil when none
	sel    int      // the highlighted choice of a form read
	draft  string   // the prompt's text put aside while a form is answered
	queued []string // lines entered while no prompt was waiting
	// diverted is set once keys typed at a strict question went to the
	// draft (see readMsg.strict).
	diverted bool
	// menuSel is the highlighted command of the slash menu while the
	// editor holds menuFor (another text starts again at the top).
	menuSel int
	menuFor string
	// typed is what was typed before the program took the terminal,
	// read by Init before any key the program reads.
	typed []byte

	history []string
	histPos int    // index into history while browsing; len(history) when not
	histCur string // what was typed before browsing
	historySearch

	transcriptState
}

func newFullModel(u *UI, f *full) *fullModel {
	ta := textarea.New()
	ta.Prompt = "> "
	ta.ShowLineNumbers = false
	ta.Placeholder = ""
	ta.CharLimit = 0
	ta.MaxHeight = 12
	ta.SetHeight(1)
	st := textarea.DefaultDarkStyles()
	st.Focused.CursorLine = lipgloss.NewStyle()
	st.Focused.Prompt = lipgloss.NewStyle()
	st.Blurred.Prompt = lipgloss.NewStyle()
	ta.SetStyles(st)
	ta.KeyMap.InsertNewline.SetKeys("ctrl+j", "alt+enter", "shift+enter")
	ta.Focus()
	m := &fullModel{u: u, f: f, ta: ta, transcriptState: transcriptState{fs: f.fullscreen}}
	m.vp = newViewport()
	m.follow = true
	m.history = loadHistory(f.histFile)
	m.histPos = len(m.history)
	return m
}

func tick() tea.Cmd {
	return tea.Tick(100*time.Millisecond, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Init takes the keys typed before the program started, in order and
// before any it reads itself.
func (m *fullModel) Init() tea.Cmd {
	var dec uv.EventDecoder
	for buf := m.typed; len(buf) > 0; {
		n, ev := dec.Decode(buf)
		if n <= 0 {
			break
		}
		buf = buf[n:]
		if k, ok := ev.(uv.KeyPressEvent); ok {
			m.key(tea.KeyPressMsg(k))
		}
	}
	m.typed = nil
	return tick()
}

func (m *fullModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tickMsg:
		m.frame++
		if m.releaseTicks > 0 {
			// The screen the transcript covered is back (the renderer
			// draws a frame every 16ms; two ticks leave it 100ms and
			// more): print what was held.
			if m.releaseTicks--; m.releaseTicks == 0 {
				go m.f.release()
			}
		}
		return m, tick()
	case tea.WindowSizeMsg:
		m.height = msg.Height
		m.ta.SetWidth(max(10, msg.Width-1))
		m.f.live.mu.Lock()
		m.f.live.width, m.f.live.height = msg.Width, msg.Height
		m.f.live.mu.Unlock()
		return m, nil
	case readMsg:
		m.startRead(&msg)
		return m, nil
	case cancelReadMsg:
		if m.read != nil && m.read.ch == msg.ch {
			m.endRead()
		}
		return m, nil
	case tea.PasteMsg:
		// A paste is text in the editor, whatever its lines: never a
		// prompt sent line by line.
		m.ta.InsertString(normaliseNewlines(msg.Content))
		m.resize()
		return m, nil
	case tea.KeyPressMsg:
		if m.trOpen {
			return m, m.transcriptKey(msg)
		}
		return m.key(msg)
	case blockMsg:
		m.addBlock(block(msg))
		return m, nil
	case transcriptMsg:
		m.openTranscript()
		return m, nil
	case fullscreenMsg:
		m.fs = msg.on
		m.stale, m.follow = true, true
		if !msg.on {
			m.releaseTicks = 2
		}
		return m, nil
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scroll(true, 3)
		case tea.MouseWheelDown:
			m.scroll(false, 3)
		}
		return m, nil
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	return m, cmd
}

func (m *fullModel) startRead(r *readMsg) {
	m.read = r
	m.sel = -1
	if len(r.choices) > 0 {
		m.sel = 0
	}
	if r.strict {
		m.sel = len(r.choices) - 1 // the last choice (no) is the default
		m.diverted = false
	}
	if r.form {
		m.draft = m.ta.Value()
		m.ta.Reset()
		m.ta.Prompt = ""
		return
	}
	m.ta.Prompt = "> "
	m.f.setBusy(false)
	m.u.dropEarlyKey()
	if len(m.queued) > 0 {
		line := m.queued[0]
		m.queued = m.queued[1:]
		m.reply(lineResult{line: line})
	}
}

func (m *fullModel) endRead() {
	if m.read != nil && m.read.form {
		m.ta.SetValue(m.draft)
		m.draft = ""
	}
	m.read = nil
	m.ta.Prompt = "> "
	m.ta.SetHeight(max(1, min(m.ta.LineCount(), m.ta.MaxHeight)))
}

// reply answers the pending read.
func (m *fullModel) reply(r lineResult) {
	if m.read == nil {
		return
	}
	form := m.read.form
	m.read.ch <- r
	m.endRead()
	if !form && r.err == nil {
		m.f.setBusy(true)
	}
}

func (m *fullModel) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.searching {
		return m, m.searchKey(msg)
	}
	k := msg.String()
	if r := m.read; r != nil && r.strict {
		if m.strictKey(msg) {
			return m, nil
		}
	}
	if r := m.read; r != nil && r.digits && m.ta.Value() == "" && len(r.choices) <= 9 {
		if n, err := strconv.Atoi(k); err == nil && len(k) == 1 && n >= 1 && n <= len(r.choices) {
			m.reply(lineResult{line: k})
			return m, nil
		}
	}
	if cs := m.menu(); len(cs) > 0 {
		if done, cmd := m.menuKey(k, cs); done {
			return m, cmd
		}
	}
	switch k {
	case "shift+tab":
		m.cycleMode()
		return m, nil
	case "ctrl+r":
		if m.read == nil || !m.read.form {
			m.startSearch()
			return m, nil
		}
	case "ctrl+c":
		switch {
		case m.read != nil && m.ta.Value() != "" && !m.read.form:
			m.ta.Reset()
			m.resize()
		case m.read != nil:
			m.reply(lineResult{err: ErrInterruptKey})
		default:
			// A turn is running, or about to: cancel it.
			m.u.sentKeyInterrupt()
		}
		return m, nil
	case "ctrl+o":
		return m, m.toggleExpanded()
	case "pgup", "pgdown":
		if m.fs {
			m.scroll(k == "pgup", m.vp.Height()-1)
			return m, nil
		}
	case "esc":
		switch {
		case m.read == nil:
			// The prompts queued behind the turn were meant to follow
			// it: they go back to the editor rather than being sent.
			if len(m.queued) > 0 {
				back := append(m.queued, m.ta.Value())
				if m.ta.Value() == "" {
					back = m.queued
				}
				m.queued = nil
				m.ta.SetValue(strings.Join(back, "\n"))
				m.resize()
			}
			m.u.sentKeyInterrupt()
		case m.read.form:
			// Esc refuses the question on screen.
			m.reply(lineResult{err: errEscape})
		}
		return m, nil
	case "ctrl+d":
		if m.read != nil && !m.read.form && m.ta.Value() == "" {
			m.reply(lineResult{err: io.EOF})
			return m, nil
		}
	case "enter":
		return m, m.submit()
	case "up", "down":
		if m.read != nil && len(m.read.choices) > 0 {
			n := len(m.read.choices)
			if k == "up" {
				m.sel = (m.sel + n - 1) % n
			} else {
				m.sel = (m.sel + 1) % n
			}
			return m, nil
		}
		if (m.read == nil || !m.read.form) && m.browse(k == "up") {
			return m, nil
		}
	case "tab":
		if m.read == nil || !m.read.form {
			return m, m.complete()
		}
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	m.resize()
	return m, cmd
}

// strictKey handles a key at a strict question (readMsg.strict) and says
// whether it did: a choice's digit answers, text goes to the draft (the
// prompt's editor, put back after the question), and Enter after such
// text queues the draft as a prompt.
func (m *fullModel) strictKey(msg tea.KeyPressMsg) bool {
	k := msg.String()
	if n, err := strconv.Atoi(k); err == nil && len(k) == 1 && n >= 1 && n <= len(m.read.choices) {
		m.ta.Reset()
		m.reply(lineResult{line: k})
		return true
	}
	switch {
	case k == "enter" && m.diverted:
		if strings.TrimSpace(m.draft) != "" {
			m.addHistory(m.draft)
			m.queued = append(m.queued, m.draft)
		}
		m.draft, m.diverted = "", false
		return true
	case k == "enter" || k == "up" || k == "down" || k == "esc" || k == "ctrl+c":
		return false
	case k == "backspace" && m.diverted:
		if r := []rune(m.draft); len(r) > 0 {
			m.draft = string(r[:len(r)-1])
		}
		return true
	case msg.Text != "":
		m.draft += msg.Text
		m.diverted = true
		return true
	}
	return true
}

// submit sends the editor's text: to the pending read, or queued for the
// next prompt when none waits. A line ending in a backslash continues on
// the next line instead.
func (m *fullModel) submit() tea.Cmd {
	text := m.ta.Value()
	if strings.HasSuffix(text, "\\") {
		m.ta.SetValue(strings.TrimSuffix(text, "\\") + "\n")
		m.resize()
		return nil
	}
	if m.read != nil && m.read.form {
		if strings.TrimSpace(text) == "" && m.sel >= 0 {
			text = strconv.Itoa(m.sel + 1)
		}
		m.ta.Reset()
		m.reply(lineResult{line: text})
		return nil
	}
	m.ta.Reset()
	m.resize()
	if strings.TrimSpace(text) != "" {
		m.addHistory(text)
	}
	if m.read == nil {
		if strings.TrimSpace(text) != "" {
			m.queued = append(m.queued, text)
		}
		return nil
	}
	m.reply(lineResult{line: text})
	return nil
}

func (m *fullModel) resize() {
	m.ta.SetHeight(max(1, min(m.ta.LineCount(), m.ta.MaxHeight)))
}

func normaliseNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

var spinFramesFull = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (m *fullModel) View() tea.View {
	switch {
	case m.trOpen:
		v := tea.NewView(m.transcriptView())
		v.AltScreen = true
		return v
	case m.fs:
		v := tea.NewView(m.fullscreenView())
		v.AltScreen = true
		v.MouseMode = tea.MouseModeCellMotion
		return v
	}
	return tea.NewView(m.view())
}

func (m *fullModel) view() string {
	l := &m.f.live
	l.mu.Lock()
	width := l.width
	text, thinking := l.text.String(), l.thinking
	busy, since, tokens, status, now := l.busy, l.since, l.tokensLine(), l.status, l.now()
	type callView struct {
		label, progress string
		started         time.Time
	}
	var calls []callView
	for _, id := range l.order {
		if c := l.calls[id]; c != nil && c.label != "" {
			calls = append(calls, callView{c.label, c.progress, c.started})
		}
	}
	l.mu.Unlock()

	var b strings.Builder
	spin := spinFramesFull[m.frame%len(spinFramesFull)]
	if strings.TrimSpace(text) != "" {
		var shown string
		text = terminalSafe(text)
		if thinking {
			shown = styleDim.Italic(true).Render(strings.TrimSpace(text))
		} else {
			shown = m.f.md.render(text, width)
		}
		for _, l := range strings.Split(shown, "\n") {
			b.WriteString(truncateWidth(l, width) + "\n")
		}
	}
	for _, c := range calls {
		line := fmt.Sprintf("%s %s", styleAccent.Render(spin), c.label)
		if c.progress != "" {
			line += " · " + c.progress
		}
		line += styleDim.Render(fmt.Sprintf(" · %ds", int(now.Sub(c.started).Seconds())))
		b.WriteString(truncateWidth(line, width) + "\n")
	}
	if busy {
		line := fmt.Sprintf("%s %s", styleAccent.Render(spin), "Working…")
		info := fmt.Sprintf(" (%ds · %s · esc to interrupt)", int(now.Sub(since).Seconds()), tokens)
		if status != "" {
			info += " · " + status
		}
		b.WriteString(truncateWidth(line+styleDim.Render(info), width) + "\n")
	}
	for _, q := range m.queued {
		b.WriteString(styleDim.Render(truncateWidth("⏎ queued: "+strings.ReplaceAll(q, "\n", " ⏎ "), width)) + "\n")
	}
	if m.read != nil && m.read.form {
		for i, c := range m.read.choices {
			mark := "  "
			if i == m.sel {
				mark = styleAccent.Render("❯ ")
			}
			b.WriteString(truncateWidth(fmt.Sprintf("%s%d. %s", mark, i+1, c), width) + "\n")
		}
		if len(m.read.choices) > 0 {
			b.WriteString(styleDim.Render("(↑/↓ and Enter, or type the number)") + "\n")
		}
		if m.read.strict && m.draft != "" {
			b.WriteString(styleDim.Render(truncateWidth("typed for the prompt: "+strings.ReplaceAll(m.draft, "\n", " ⏎ "), width)) + "\n")
		}
		b.WriteString(m.read.prompt)
	}
	if m.searching {
		b.WriteString(m.searchView(width))
	} else {
		b.WriteString(m.ta.View())
	}
	b.WriteString(m.menuView(width))
	m.f.live.mu.Lock()
	modeOf := m.f.live.mode
	m.f.live.mu.Unlock()
	mode := ""
	if modeOf != nil {
		mode = modeOf()
	}
	if mode != "" && mode != "default" && (m.read == nil || !m.read.form) {
		b.WriteString("\n" + styleAccent.Render("⏵⏵ "+mode+" mode") + styleDim.Render(" (shift+tab to cycle)"))
	}
	// The live area keeps to liveRows rows (see printAbove), its top
	// (the reply's head, printed in full once it ends) giving way first.
	lines := strings.Split(b.String(), "\n")
	if n := liveRows(m.height); len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func truncateWidth(s string, width int) string {
	if width <= 4 || lipgloss.Width(s) < width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r)) >= width-1 {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// browse moves through the prompt history; it reports whether it did
// (the cursor is on the editor's first or last line).
func (m *fullModel) browse(up bool) bool {
	if m.ta.LineCount() > 1 {
		row := m.ta.Line()
		if up && row > 0 || !up && row < m.ta.LineCount()-1 {
			return false
		}
	}
	switch {
	case up && m.histPos > 0:
		if m.histPos == len(m.history) {
			m.histCur = m.ta.Value()
		}
		m.histPos--
		m.ta.SetValue(m.history[m.histPos])
	case !up && m.histPos < len(m.history):
		m.histPos++
		if m.histPos == len(m.history) {
			m.ta.SetValue(m.histCur)
		} else {
			m.ta.SetValue(m.history[m.histPos])
		}
	default:
		return false
	}
	m.resize()
	return true
}

func (m *fullModel) addHistory(line string) {
	if n := len(m.history); n == 0 || m.history[n-1] != line {
		m.history = append(m.history, line)
		appendHistory(m.f.histFile, line)
	}
	m.histPos = len(m.history)
	m.histCur = ""
}

// complete completes the @path word before the cursor: to the only
// match, or to the longest common prefix of the matches (listing them
// when that adds nothing). It runs on the event loop, so it prints with a
// command.
func (m *fullModel) complete() tea.Cmd {
	text := m.ta.Value()
	i := strings.LastIndexAny(text, " \n\t")
	word := text[i+1:]
	if !strings.HasPrefix(word, "@") {
		return nil
	}
	matches := completePath(m.f.cwd(), word[1:])
	if len(matches) == 0 {
		return nil
	}
	pick := matches[0]
	for _, c := range matches[1:] {
		for !strings.HasPrefix(c, pick) {
			pick = pick[:len(pick)-1]
		}
	}
	if len(matches) > 1 && pick == word[1:] {
		list := styleDim.Render(strings.Join(matches, "  "))
		if m.fs {
			m.addBlock(block{short: list})
			return nil
		}
		return tea.Println(list)
	}
	m.ta.SetValue(text[:i+1] + "@" + pick)
	return nil
}

// completePath lists the entries of cwd (or the directory prefix names)
// whose path starts with prefix; directories end with a slash.
func completePath(cwd, prefix string) []string {
	dir, base := filepath.Split(prefix)
	abs := dir
	if !filepath.IsAbs(dir) {
		abs = filepath.Join(cwd, dir)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		out = append(out, dir+name)
	}
	sort.Strings(out)
	return out
}

// HistoryPath is where the prompts typed in project cwd are kept, under
// agent-mcp's state directory.
func HistoryPath(stateDir, cwd string) string {
	sum := sha256.Sum256([]byte(cwd))
	return filepath.Join(stateDir, "history", hex.EncodeToString(sum[:8])+".txt")
}

// maxHistory bounds the history file's lines kept.
const maxHistory = 500

func loadHistory(path string) []string {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" {
			continue
		}
		if s, err := strconv.Unquote(l); err == nil {
			out = append(out, s)
		}
	}
	if len(out) > maxHistory {
		out = out[len(out)-maxHistory:]
	}
	return out
}

func appendHistory(path, line string) {
	if path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(strconv.Quote(line) + "\n")
}

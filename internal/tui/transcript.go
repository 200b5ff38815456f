package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
)

// The transcript: every finished block of the conversation as shown (a
// reply, a tool call with its result, a notice), kept so that outputs cut
// short can be shown whole. Ctrl-O shows them: inline, it covers the
// screen with the whole transcript, every cut output expanded, until
// Ctrl-O (or Esc, or q) again; in full-screen mode, where the transcript
// is the screen, it expands and collapses them all in place.

// block is one finished piece of the conversation: short is what is shown
// at first; long, when set, is the whole of what short cut.
type block struct{ short, long string }

// maxBlocks bounds the transcript kept; the oldest blocks go first.
const maxBlocks = 2000

type (
	// blockMsg adds a finished block to the transcript.
	blockMsg block
	// transcriptMsg opens the transcript over the inline screen.
	transcriptMsg struct{}
	// fullscreenMsg turns full-screen mode on or off.
	fullscreenMsg struct{ on bool }
)

// transcriptState is the fullModel's part that keeps and shows the
// transcript.
type transcriptState struct {
	// fs is set in full-screen mode: the transcript is the screen.
	fs     bool
	blocks []block
	// expanded shows the blocks' long forms in full-screen mode.
	expanded bool
	// vp shows the conversation in full-screen mode; follow keeps it at
	// the bottom as blocks arrive (unset while the user scrolls back).
	vp     viewport.Model
	follow bool
	// content is vp's text; stale asks for it to be made again.
	content []string
	stale   bool
	// gen counts the changes to content; vpGen is the one vp shows.
	gen, vpGen int

	// trOpen is set while the transcript covers the inline screen, shown
	// in trVP; releaseTicks counts the ticks, after it closed, before
	// what was printed meanwhile is let through.
	trOpen       bool
	trVP         viewport.Model
	releaseTicks int
}

func (b block) view(expanded bool) string {
	if expanded && b.long != "" {
		return b.long
	}
	return b.short
}

func (m *fullModel) addBlock(b block) {
	if len(m.blocks) >= maxBlocks {
		m.blocks = append(m.blocks[:0], m.blocks[len(m.blocks)-maxBlocks+1:]...)
		m.stale = true
	}
	m.blocks = append(m.blocks, b)
	if m.fs && !m.stale {
		m.content = append(m.content, strings.Split(b.view(m.expanded), "\n")...)
		m.gen++
	}
	if m.trOpen {
		follow := m.trVP.AtBottom()
		m.trVP.SetContentLines(append(strings.Split(m.trVP.GetContent(), "\n"), strings.Split(b.view(true), "\n")...))
		if follow {
			m.trVP.GotoBottom()
		}
	}
}

// lines is the full-screen conversation, made again when stale.
func (m *fullModel) lines() []string {
	if m.stale {
		m.content = m.content[:0]
		for _, b := range m.blocks {
			m.content = append(m.content, strings.Split(b.view(m.expanded), "\n")...)
		}
		m.stale = false
		m.gen++
	}
	return m.content
}

// toggleExpanded is Ctrl-O: in full-screen mode every cut output expands
// or collapses; inline, the transcript opens (or closes).
func (m *fullModel) toggleExpanded() tea.Cmd {
	if m.fs {
		m.expanded = !m.expanded
		m.stale = true
		return nil
	}
	if m.releaseTicks > 0 {
		// Closed a moment ago and still holding: open it again at once.
		m.releaseTicks = 0
		m.openTranscript()
		return nil
	}
	go m.f.openTranscript()
	return nil
}

func (m *fullModel) openTranscript() {
	m.trOpen = true
	lines := []string{}
	for _, b := range m.blocks {
		lines = append(lines, strings.Split(b.view(true), "\n")...)
	}
	m.trVP = newViewport()
	m.trVP.SetContentLines(lines)
	m.layoutTranscript()
	m.trVP.GotoBottom()
}

func (m *fullModel) layoutTranscript() {
	m.trVP.SetWidth(max(10, m.f.live.width))
	m.trVP.SetHeight(max(1, m.height-1))
}

// newViewport is a view of the conversation: long lines wrap, and the
// view fills its height (so that the input stays at the bottom).
func newViewport() viewport.Model {
	vp := viewport.New()
	vp.SoftWrap = true
	vp.FillHeight = true
	return vp
}

// transcriptKey handles a key while the transcript covers the screen.
func (m *fullModel) transcriptKey(msg tea.KeyPressMsg) tea.Cmd {
	vp := &m.trVP
	switch msg.String() {
	case "ctrl+o", "esc", "q", "ctrl+c":
		m.trOpen = false
		m.releaseTicks = 2
	case "up", "k":
		vp.ScrollUp(1)
	case "down", "j":
		vp.ScrollDown(1)
	case "pgup", "b":
		vp.PageUp()
	case "pgdown", "space", "f":
		vp.PageDown()
	case "home", "g":
		vp.GotoTop()
	case "end", "G":
		vp.GotoBottom()
	}
	return nil
}

func (m *fullModel) transcriptView() string {
	m.layoutTranscript()
	head := styleDim.Render(truncateWidth("Transcript, every output expanded · ↑/↓ PgUp/PgDn Home/End scroll · ctrl+o or esc to go back", m.f.live.width))
	return head + "\n" + m.trVP.View()
}

// scroll moves the full-screen conversation up or down by n lines.
func (m *fullModel) scroll(up bool, n int) {
	if up {
		m.vp.ScrollUp(max(1, n))
	} else {
		m.vp.ScrollDown(max(1, n))
	}
	m.follow = m.vp.AtBottom()
}

// fullscreenView is the conversation in a view filling the screen above
// what is live (the streaming reply, the spinner, the input).
func (m *fullModel) fullscreenView() string {
	live := m.view()
	h := strings.Count(live, "\n") + 1
	m.vp.SetWidth(max(10, m.f.live.width))
	m.vp.SetHeight(max(1, m.height-h))
	if lines := m.lines(); m.vpGen != m.gen {
		// A copy: the viewport may rewrite the lines it is given.
		m.vp.SetContentLines(slices.Clone(lines))
		m.vpGen = m.gen
	}
	if m.follow {
		m.vp.GotoBottom()
	}
	return m.vp.View() + "\n" + live
}

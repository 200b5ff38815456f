package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The keys a daily user reaches for, in the full UI: a menu of the slash
// commands that filters as the command is typed (Tab completes it),
// Shift+Tab to cycle the permission mode, and Ctrl-R to search the
// prompts typed before.

// Command is a slash command offered in the menu.
type Command struct {
	// Name is the command without its slash.
	Name string
	// Desc says what it does, in a few words.
	Desc string
}

// SetCommands sets the slash commands the menu offers.
func (u *UI) SetCommands(cs []Command) {
	if f := u.full; f != nil {
		f.live.mu.Lock()
		f.live.commands = append([]Command(nil), cs...)
		f.live.mu.Unlock()
	}
}

// SetModeCycle sets what Shift+Tab does: next moves the session to the
// next permission mode; mode tells the one it is in, shown under the
// editor unless it is "default".
func (u *UI) SetModeCycle(mode func() string, next func()) {
	if f := u.full; f != nil {
		f.live.mu.Lock()
		f.live.mode, f.live.nextMode = mode, next
		f.live.mu.Unlock()
	}
}

// SetContextWindow sets the model's context size in tokens, for the
// spinner's gauge of how full it is; 0 shows none.
func (u *UI) SetContextWindow(n int) {
	if f := u.full; f != nil {
		f.live.mu.Lock()
		f.live.window = n
		f.live.mu.Unlock()
	}
}

// ContextGauge words how full a context window of window tokens is with
// used of them: "12% of the context".
func ContextGauge(used int64, window int) string {
	if window <= 0 {
		return ""
	}
	return fmt.Sprintf("%d%% of the context", min(100, used*100/int64(window)))
}

// cycleMode moves to the next permission mode (Shift+Tab).
func (m *fullModel) cycleMode() {
	l := &m.f.live
	l.mu.Lock()
	next := l.nextMode
	l.mu.Unlock()
	if next != nil {
		next()
	}
}

// menuMax bounds the commands the menu lists.
const menuMax = 8

// menu is the commands whose name starts with what the editor holds,
// while it holds a slash and a word being typed; nil otherwise.
func (m *fullModel) menu() []Command {
	if m.read != nil && m.read.form || m.searching {
		return nil
	}
	text := m.ta.Value()
	if !strings.HasPrefix(text, "/") || strings.ContainsAny(text, " \n\t") {
		return nil
	}
	m.f.live.mu.Lock()
	all := m.f.live.commands
	m.f.live.mu.Unlock()
	var out []Command
	for _, c := range all {
		if strings.HasPrefix(c.Name, text[1:]) {
			out = append(out, c)
		}
	}
	return out
}

// menuSelected is the highlighted command of the menu cs: the one the
// arrows moved to for this text, else the one the text names exactly,
// else the first.
func (m *fullModel) menuSelected(cs []Command) int {
	text := m.ta.Value()
	if m.menuFor == text {
		return min(max(0, m.menuSel), len(cs)-1)
	}
	for i, c := range cs {
		if "/"+c.Name == text {
			return i
		}
	}
	return 0
}

// menuKey handles a key while the menu is shown: ↑/↓ move its cursor,
// Tab completes the highlighted command, Enter runs it.
func (m *fullModel) menuKey(k string, cs []Command) (bool, tea.Cmd) {
	sel := m.menuSelected(cs)
	switch k {
	case "up", "down":
		if k == "up" {
			sel = (sel + len(cs) - 1) % len(cs)
		} else {
			sel = (sel + 1) % len(cs)
		}
		m.menuSel, m.menuFor = sel, m.ta.Value()
		return true, nil
	case "tab":
		m.ta.SetValue("/" + cs[sel].Name + " ")
		return true, nil
	case "enter":
		m.ta.SetValue("/" + cs[sel].Name)
		return true, m.submit()
	}
	return false, nil
}

// menuView draws the menu under the editor, the highlighted command
// marked, at most menuMax rows of it around the highlight.
func (m *fullModel) menuView(width int) string {
	cs := m.menu()
	if len(cs) == 0 {
		return ""
	}
	sel := m.menuSelected(cs)
	first := max(0, sel-menuMax+1)
	var b strings.Builder
	if first > 0 {
		b.WriteString("\n" + styleDim.Render(fmt.Sprintf("  … %d more", first)))
	}
	for i := first; i < len(cs) && i < first+menuMax; i++ {
		c := cs[i]
		mark := "  "
		if i == sel {
			mark = styleAccent.Render("❯ ")
		}
		b.WriteString("\n" + truncateWidth(fmt.Sprintf("%s%s %s", mark, styleAccent.Render(fmt.Sprintf("/%-12s", c.Name)), styleDim.Render(c.Desc)), width))
	}
	if rest := len(cs) - first - menuMax; rest > 0 {
		b.WriteString("\n" + styleDim.Render(fmt.Sprintf("  … %d more", rest)))
	}
	b.WriteString("\n" + styleDim.Render("  (↑/↓ to move · tab completes · enter runs)"))
	return b.String()
}

// The prompt history search (Ctrl-R): typed text narrows it to the most
// recent prompt holding it, Ctrl-R again goes to an older one, Enter puts
// the match in the editor, Esc or Ctrl-G leaves the editor as it was.
type historySearch struct {
	searching bool
	query     string
	// found is the index in history of the match shown; -1 when none.
	found int
}

func (m *fullModel) startSearch() {
	m.searching, m.query = true, ""
	m.found = -1
	m.findOlder(len(m.history))
}

// findOlder finds the latest prompt before index from that holds the
// query.
func (m *fullModel) findOlder(from int) {
	for i := min(from, len(m.history)) - 1; i >= 0; i-- {
		if strings.Contains(m.history[i], m.query) {
			m.found = i
			return
		}
	}
	if m.query != "" || from == len(m.history) {
		m.found = -1
	}
}

func (m *fullModel) searchKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "ctrl+r":
		if m.found > 0 {
			m.findOlder(m.found)
		}
	case "enter":
		if m.found >= 0 {
			m.ta.SetValue(m.history[m.found])
			m.resize()
		}
		m.searching = false
	case "esc", "ctrl+g", "ctrl+c":
		m.searching = false
	case "backspace":
		if r := []rune(m.query); len(r) > 0 {
			m.query = string(r[:len(r)-1])
			m.findOlder(len(m.history))
		}
	default:
		if t := msg.Key().Text; t != "" {
			m.query += t
			m.findOlder(len(m.history))
		}
	}
	return nil
}

// searchView is the line shown instead of the editor while searching.
func (m *fullModel) searchView(width int) string {
	match := ""
	if m.found >= 0 {
		match = strings.ReplaceAll(m.history[m.found], "\n", " ⏎ ")
	} else if m.query != "" {
		match = styleDim.Render("(no match)")
	}
	return truncateWidth(fmt.Sprintf("(reverse-i-search)`%s': %s", m.query, match), width)
}

package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A Ctrl-C typed right after a line is sent, before the turn it starts
// has set its handler (a window a loaded machine stretches), still
// cancels that turn; one typed after a turn, before the next prompt, is
// not kept for a later turn.
func TestFull_ctrl_c_before_the_turn_sets_its_handler(t *testing.T) {
	u := &UI{tty: true, running: map[string]*running{}}
	f := &full{done: make(chan struct{})}
	f.live.calls = map[string]*running{}
	u.full = f
	m := newFullModel(u, f)
	ctrlC := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	calls := make(chan string, 4)
	handler := func(name string) func() { return func() { calls <- name } }

	for _, key := range []tea.KeyPressMsg{ctrlC, esc} {
		// The line was sent: no read waits, no handler is set yet.
		m.Update(key)
		u.SetInterruptKey(handler("turn"))
		select {
		case got := <-calls:
			if got != "turn" {
				t.Fatalf("%s: %q ran", key, got)
			}
		default:
			t.Fatalf("%s typed before the turn set its handler was lost", key)
		}
		// With the handler set, the key reaches it (on another goroutine).
		m.Update(key)
		if got := <-calls; got != "turn" {
			t.Fatalf("%s: %q ran", key, got)
		}
		u.SetInterruptKey(nil)
	}

	// After the turn, before the next prompt: the prompt drops the key.
	m.Update(ctrlC)
	m.Update(readMsg{prompt: "> ", ch: make(chan lineResult, 1)})
	u.SetInterruptKey(handler("next turn"))
	select {
	case got := <-calls:
		t.Fatalf("a Ctrl-C typed before the prompt ran %q", got)
	default:
	}
}

// In full-screen mode the conversation is the transcript's blocks: Ctrl-O
// swaps every cut block for its whole form and back, and the transcript
// keeps at most maxBlocks blocks, the newest.
func TestFull_fullscreen_transcript_expands_in_place_and_is_bounded(t *testing.T) {
	u := &UI{tty: true, running: map[string]*running{}}
	f := &full{done: make(chan struct{}), fullscreen: true}
	f.live.calls = map[string]*running{}
	f.live.width = 80
	u.full = f
	m := newFullModel(u, f)
	m.height = 20
	m.Update(blockMsg{short: "plain"})
	m.Update(blockMsg{short: "cut (ctrl+o to expand)", long: "whole\nof it"})
	if got := strings.Join(m.lines(), "|"); got != "plain|cut (ctrl+o to expand)" {
		t.Fatalf("collapsed: %q", got)
	}
	ctrlO := tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	m.Update(ctrlO)
	if got := strings.Join(m.lines(), "|"); got != "plain|whole|of it" {
		t.Fatalf("expanded: %q", got)
	}
	if v := m.View(); !v.AltScreen || !strings.Contains(v.Content, "whole") {
		t.Fatalf("the full-screen view %+v does not show the expanded block", v)
	}
	m.Update(ctrlO)
	if got := strings.Join(m.lines(), "|"); got != "plain|cut (ctrl+o to expand)" {
		t.Fatalf("collapsed again: %q", got)
	}
	for i := range maxBlocks + 5 {
		m.Update(blockMsg{short: fmt.Sprint("b", i)})
	}
	lines := m.lines()
	if len(m.blocks) != maxBlocks || lines[0] != "b5" || lines[len(lines)-1] != fmt.Sprint("b", maxBlocks+4) {
		t.Fatalf("%d blocks kept, from %q to %q", len(m.blocks), lines[0], lines[len(lines)-1])
	}
}

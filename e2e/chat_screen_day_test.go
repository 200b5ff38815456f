package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// The chat screen through a day's work, read through a terminal emulator
// with its scrollback at the sizes people use, inline and full-screen:
// nothing typed is lost, and the user reads the user's text.

// screenModes are the modes and sizes the screen tests run in.
var screenModes = []struct {
	name       string
	cols, rows int
	extra      []string
}{
	{"inline_120x40", 120, 40, nil},
	{"inline_80x24", 80, 24, nil},
	{"fullscreen_120x40", 120, 40, []string{"--fullscreen"}},
	{"fullscreen_80x24", 80, 24, []string{"--fullscreen"}},
}

// conversationText is what a session shows, read through the emulator:
// in full-screen mode the view at its end and at its top (PgUp), else
// the scrollback and the screen.
func conversationText(u *tui, fullscreen bool) string {
	u.t.Helper()
	if !fullscreen {
		return strings.Join(u.disp.all(), "\n")
	}
	bottom := u.disp.String()
	for range 6 {
		u.keys("\x1b[5~") // PgUp
	}
	u.waitDisplay("Type /help for commands.")
	top := u.disp.String()
	u.keys("\x1b[6~\x1b[6~\x1b[6~\x1b[6~\x1b[6~\x1b[6~") // back down
	return top + "\n" + bottom
}

// flowed is the display's text with its lines joined by single spaces:
// for a phrase that may wrap.
func flowed(d string) string { return strings.Join(strings.Fields(d), " ") }

// lastPrompt is the text of the last user message of a model request.
func lastPrompt(r testmodel.Request) string {
	s := decodeRequest(r)
	return textOf(s.msgs[len(s.msgs)-1]["content"])
}

// The user reads a short outcome line per tool, with paths relative to the
// project, rather than the text written for the model: no tagged fields,
// no advice to the model, no JSON for a call's arguments; and the model's
// text is there on request (Ctrl-O).
func TestChatDay_tool_lines_are_written_for_the_user(t *testing.T) {
	for _, mode := range screenModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			x := filepath.Join(c.dir, "src", "x.go")
			if err := os.MkdirAll(filepath.Dir(x), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(x, []byte("package x\n\nvar A = 1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			y := filepath.Join(c.dir, "src", "y.go")
			call := func(id, name string, in map[string]any) testmodel.Reply {
				b, _ := json.Marshal(in)
				return testmodel.Call(testmodel.ToolCall{ID: id, Name: name, Input: string(b)})
			}
			srv := testmodel.NewServer(t,
				call("r1", "Read", map[string]any{"file_path": x}),
				call("e1", "Edit", map[string]any{"file_path": x, "old_string": "var B = 2", "new_string": "var B = 3"}),
				call("w1", "Write", map[string]any{"file_path": y, "content": "package x\n\nvar C = 3\n"}),
				call("b1", "Bash", map[string]any{"command": `read line; echo "got $line"`, "run_in_background": true}),
				call("t1", "TaskInput", map[string]any{"task_id": "bash_1", "input": "hi\n", "wait_for": "got hi"}),
				testmodel.Say("All done."))
			extra := append([]string{"--allowed-tools", "Read,Edit,Write,Bash,TaskInput"}, mode.extra...)
			u := startTUISized(t, c, mode.cols, mode.rows, srv, extra...)
			u.keys("work\r")
			u.waitDisplay("All done.")
			u.waitDisplay("tokens:")
			fs := len(mode.extra) > 0
			all := conversationText(u, fs)
			for _, want := range []string{
				"Read(src/x.go)", "Edit(src/x.go)", "Edit failed: old_string was not found in src/x.go",
				"Write(src/y.go)", "Wrote src/y.go (3 lines)",
				"Running in the background as bash_1", "TaskInput(bash_1", "got hi",
			} {
				if !strings.Contains(all, want) {
					t.Errorf("the screen lacks %q", want)
				}
			}
			for _, bad := range []string{
				"<retrieval_status>", "Your view of the file", "It must match the file's text exactly",
				`{"`, c.dir + string(filepath.Separator), "TaskOutput, type into it",
			} {
				if strings.Contains(all, bad) {
					t.Errorf("the screen shows text written for the model: %q", bad)
				}
			}
			if t.Failed() {
				t.Logf("screen and scrollback:\n%s", all)
			}
			if !fs {
				// Ctrl-O: every call's text, as the model read it.
				u.keys("\x0f")
				u.waitDisplay("every output expanded")
				u.keys("\x1b[H") // Home
				u.waitDisplayIs("the Edit's whole text", func(d string) bool {
					return strings.Contains(flowed(d), "It must match the file's text exactly")
				})
				u.keys("\x0f")
				u.waitDisplayGone("every output expanded")
			}
			u.exit()
		})
	}
}

// The slash menu has a cursor: ↑/↓ move it, Enter runs the highlighted
// command, Tab completes it.
func TestChatDay_slash_menu_has_a_cursor(t *testing.T) {
	for _, mode := range screenModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			srv := testmodel.NewServer(t)
			u := startTUISized(t, c, mode.cols, mode.rows, srv, mode.extra...)
			u.keys("/c")
			u.waitDisplay("❯ /clear")
			u.keys("\x1b[B\x1b[B") // ↓ ↓
			u.waitDisplay("❯ /cost")
			u.keys("\r")
			u.waitDisplay("No model calls yet.")
			u.waitDisplayGone("tab completes")
			u.keys("/he\t")
			u.waitDisplay("> /help")
			u.keys("\r")
			u.waitDisplayIs("/help's text", func(d string) bool {
				return strings.Contains(flowed(d), "typing / lists the commands")
			})
			u.exit()
		})
	}
}

// A digit answers a permission question at once, without Enter.
func TestChatDay_digit_answers_a_permission_question(t *testing.T) {
	for _, mode := range screenModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			target := filepath.Join(c.dir, "a.txt")
			in, _ := json.Marshal(map[string]any{"file_path": target, "content": "one\n"})
			srv := testmodel.NewServer(t,
				testmodel.Call(testmodel.ToolCall{ID: "w1", Name: "Write", Input: string(in)}),
				testmodel.Say("Written."))
			u := startTUISized(t, c, mode.cols, mode.rows, srv, mode.extra...)
			u.keys("write it\r")
			u.waitDisplay("1. Yes")
			u.keys("1")
			u.waitDisplay("Written.")
			if b, err := os.ReadFile(target); err != nil || string(b) != "one\n" {
				t.Errorf("a.txt = %q, %v", b, err)
			}
			u.exit()
		})
	}
}

// wideReply is a reply with a table wider than any screen and a code line
// longer than one; every word of the table is a token wNN.
func wideReply() (text string, words []string) {
	var b strings.Builder
	b.WriteString("Here it is.\n\n| Name | Description | Notes |\n|---|---|---|\n")
	for r := range 3 {
		var cells []string
		for c := range 3 {
			var ws []string
			for i := range 8 {
				w := fmt.Sprintf("w%d%d%d", r, c, i)
				ws = append(ws, w)
				words = append(words, w)
			}
			cells = append(cells, strings.Join(ws, " "))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n```go\nvar long = \"" + strings.Repeat("abcdefghij", 17) + "\" // END\n```\n\nDone here.\n")
	return b.String(), words
}

// At any width a table's cells wrap rather than being cut, and a long
// code line wraps inside its block (under its gutter).
func TestChatDay_table_and_code_wrap_at_any_width(t *testing.T) {
	for _, mode := range screenModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			text, words := wideReply()
			srv := testmodel.NewServer(t, testmodel.Say(text))
			u := startTUISized(t, c, mode.cols, mode.rows, srv, mode.extra...)
			u.keys("show me\r")
			u.waitDisplay("Done here.")
			u.waitDisplay("tokens:")
			all := conversationText(u, len(mode.extra) > 0)
			lines := strings.Split(all, "\n")
			for _, w := range words {
				if !regexp.MustCompile(`\b` + w + `\b`).MatchString(all) {
					t.Errorf("the table lost %s", w)
				}
			}
			for _, l := range lines {
				if strings.Contains(l, "│") && strings.Contains(l, "…") {
					t.Errorf("a cell was cut with …: %q", l)
				}
			}
			// The code line: every row it takes keeps the block's gutter.
			start := -1
			for i, l := range lines {
				if strings.Contains(l, "var long") {
					start = i
				}
			}
			if start < 0 {
				t.Fatalf("no code line")
			}
			for i := start; i < len(lines); i++ {
				if !strings.HasPrefix(lines[i], "  ") {
					t.Errorf("row %d of the code line left its block: %q", i-start, lines[i])
				}
				if strings.Contains(lines[i], "END") {
					break
				}
			}
			if t.Failed() {
				t.Logf("screen and scrollback:\n%s", all)
			}
			u.exit()
		})
	}
}

// A permission question for a long change keeps its title and its
// choices on the screen: the preview of the change is what gets cut.
func TestChatDay_long_write_question_keeps_title_and_choices(t *testing.T) {
	for _, mode := range screenModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			c := newChatRun(t)
			var content strings.Builder
			for i := range 80 {
				fmt.Fprintf(&content, "line %d of the new file\n", i+1)
			}
			in, _ := json.Marshal(map[string]any{"file_path": filepath.Join(c.dir, "long.txt"), "content": content.String()})
			srv := testmodel.NewServer(t,
				testmodel.Call(testmodel.ToolCall{ID: "w1", Name: "Write", Input: string(in)}),
				testmodel.Say("Written."))
			u := startTUISized(t, c, mode.cols, mode.rows, srv, mode.extra...)
			u.keys("write it\r")
			u.waitDisplay("1. Yes")
			u.waitDisplayIs("the question's title with its choices", func(d string) bool {
				return strings.Contains(d, "Allow Write(long.txt)?") && strings.Contains(d, "1. Yes") && strings.Contains(d, "line 1 of")
			})
			u.keys("1")
			u.waitDisplay("Written.")
			u.exit()
		})
	}
}

package tui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/aymanbagabas/go-udiff"

	"github.com/agent-mcp/agent-mcp/orchestrator"
)

// Rendering for the full terminal UI: Markdown (markdown.go), coloured
// unified diffs of file changes, and the head and tail of command output.

// styles are the terminal UI's colours (ANSI indices, so the user's
// palette decides the shades).
var (
	styleDim     = lipgloss.NewStyle().Faint(true)
	styleBold    = lipgloss.NewStyle().Bold(true)
	styleRed     = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleGreen   = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleAccent  = lipgloss.NewStyle().Foreground(lipgloss.Color("5")).Bold(true)
	styleDelLine = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleAddLine = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
)

// Bounds of what a tool's result shows.
const (
	diffMaxLines    = 60  // diff lines shown under a file change
	bashHeadTail    = 4   // lines kept at each end of a successful command's output
	bashFailMax     = 200 // lines of a failed command's output shown in full, beyond which head and tail
	writeShownLines = 10  // lines of a new file shown
)

// patchHunk is fs's structured patch hunk, as the tools' output carries it.
type patchHunk struct {
	OldStart int      `json:"oldStart"`
	NewStart int      `json:"newStart"`
	Lines    []string `json:"lines"`
}

// resultDetail is what a finished call shows under its line: a diff for
// a file change, the output of a command, else a summary; paths in cwd
// are shown relative to it (outcome.go).
func resultDetail(out orchestrator.Outcome, cwd string) (status string, detail []string) {
	status, detail = resultDetailOf(out, cwd)
	return relPaths(status, cwd), detail
}

func resultDetailOf(out orchestrator.Outcome, cwd string) (status string, detail []string) {
	if out.Err != nil {
		return styleRed.Render(firstLine(out.Err.Error())), nil
	}
	r := out.Result
	if r == nil {
		return "done", nil
	}
	var obj map[string]json.RawMessage
	if r.Output != nil {
		b, _ := json.Marshal(r.Output)
		_ = json.Unmarshal(b, &obj)
	}
	switch out.Call.Name {
	case "Bash":
		if out.Persisted != nil {
			// Over the result budget: the output object holds where the
			// whole output was saved, which is what is shown.
			if whole, ok := persistedText(out.Persisted.Path); ok {
				b, _ := json.Marshal(whole)
				obj = map[string]json.RawMessage{"stdout": b}
			}
		}
		var id string
		if _ = json.Unmarshal(obj["backgroundTaskId"], &id); id != "" && !r.IsError {
			return backgroundOutcome(id, r.Text, obj)
		}
		if obj != nil && !r.IsError || obj != nil && obj["stdout"] != nil {
			return bashDetail(r.IsError, r.Text, obj)
		}
	case "TaskInput", "TaskOutput":
		if status, lines, ok := taskOutcome(obj); ok && !r.IsError {
			return status, lines
		}
	case "Edit", "MultiEdit", "Write":
		if r.IsError {
			return styleRed.Render(failedLine(out.Call.Name, r.Text, cwd)), nil
		}
		var hunks []patchHunk
		_ = json.Unmarshal(obj["structuredPatch"], &hunks)
		if len(hunks) > 0 {
			adds, dels := 0, 0
			for _, h := range hunks {
				for _, l := range h.Lines {
					switch {
					case strings.HasPrefix(l, "+"):
						adds++
					case strings.HasPrefix(l, "-"):
						dels++
					}
				}
			}
			// "Edited a.go: 1 replacement. The lines around ..." keeps
			// its first sentence.
			head := firstSentence(r.Text)
			if w, ok := writeOutcome(obj, cwd); ok && out.Call.Name == "Write" {
				head = w
			}
			return fmt.Sprintf("%s · %s, %s", head, countOf(adds, "addition"), countOf(dels, "removal")), hunkLines(hunks)
		}
		if out.Call.Name == "Write" {
			var in struct {
				Content string `json:"content"`
			}
			_ = json.Unmarshal(out.Call.Input, &in)
			head, ok := writeOutcome(obj, cwd)
			if !ok {
				head = firstSentence(r.Text)
			}
			return head, addedLines(in.Content, writeShownLines)
		}
	case "TodoWrite":
		if !r.IsError {
			return "", todoLines(out.Call.Input, true)
		}
	case "Read":
		if !r.IsError && len(r.Extra) == 0 {
			return summarise(readText(r.Text)), nil
		}
	case "NotebookEdit":
		if !r.IsError {
			var in struct {
				NewSource string `json:"new_source"`
			}
			_ = json.Unmarshal(out.Call.Input, &in)
			return summarise(r.Text), addedLines(in.NewSource, writeShownLines)
		}
	}
	if r.IsError {
		// The first sentence; the rest, written for the model, is on
		// Ctrl-O.
		return styleRed.Render(failedLine(out.Call.Name, r.Text, cwd)), nil
	}
	return summarise(r.Text), nil
}

// changesFiles reports whether tool's result is shown as a diff.
func changesFiles(tool string) bool {
	return tool == "Edit" || tool == "MultiEdit" || tool == "Write" || tool == "NotebookEdit"
}

// outputText is the whole of a call's output, for Ctrl-O: a command's
// output, else the result's text.
func outputText(out orchestrator.Outcome) string {
	r := out.Result
	if r == nil {
		return ""
	}
	if out.Persisted != nil {
		if whole, ok := persistedText(out.Persisted.Path); ok {
			return strings.TrimRight(whole, "\n")
		}
	}
	if out.Call.Name == "Bash" && r.Output != nil {
		b, _ := json.Marshal(r.Output)
		var o struct {
			Stdout string `json:"stdout"`
		}
		if json.Unmarshal(b, &o) == nil && o.Stdout != "" {
			return strings.TrimRight(o.Stdout, "\n")
		}
	}
	return strings.TrimRight(r.Text, "\n")
}

// firstSentence is text's first line up to the end of its first
// sentence, without the full stop.
func firstSentence(text string) string {
	s := firstLine(text)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, ".:")
}

// countOf is "1 addition", "2 additions".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// readText is a Read result's numbered lines without the empty line after
// the file's last newline, which Read shows but is no line of the file.
func readText(text string) string {
	text = strings.TrimRight(text, "\n")
	i := strings.LastIndexByte(text, '\n')
	last := text[i+1:]
	if n, ok := strings.CutSuffix(last, "\t"); ok && n != "" && strings.Trim(n, "0123456789") == "" && i >= 0 {
		return text[:i]
	}
	return text
}

// todoLines draws a TodoWrite's list as a checklist: done items ticked
// (and, styled, struck through), the one in progress in bold, the rest
// open.
func todoLines(input json.RawMessage, styled bool) []string {
	var in struct {
		Todos []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	if len(in.Todos) == 0 {
		return []string{"(the list is empty)"}
	}
	out := make([]string, 0, len(in.Todos))
	for _, t := range in.Todos {
		if !styled {
			mark := "☐ "
			if t.Status == "completed" {
				mark = "☒ "
			}
			out = append(out, mark+t.Content)
			continue
		}
		switch t.Status {
		case "completed":
			out = append(out, styleGreen.Render("☒ ")+styleDim.Strikethrough(true).Render(t.Content))
		case "in_progress":
			out = append(out, "☐ "+styleBold.Render(t.Content))
		default:
			out = append(out, "☐ "+t.Content)
		}
	}
	return out
}

// maxPersistedRead bounds what is read of a saved result to show it.
const maxPersistedRead = 4 << 20

// persistedText is the text of a result saved for being over its budget
// (at most maxPersistedRead bytes of it).
func persistedText(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPersistedRead))
	if err != nil {
		return "", false
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), true
}

// bashDetail shows a command's output: head and tail when it succeeded,
// all of it (bounded) when it failed.
func bashDetail(failed bool, text string, obj map[string]json.RawMessage) (string, []string) {
	var stdout string
	_ = json.Unmarshal(obj["stdout"], &stdout)
	var code *int
	_ = json.Unmarshal(obj["exitCode"], &code)
	stdout = strings.TrimRight(stdout, "\n")
	var lines []string
	if stdout != "" {
		lines = strings.Split(stdout, "\n")
	}
	if failed || code != nil && *code != 0 {
		status := "failed"
		if code != nil {
			status = fmt.Sprintf("Exit code %d", *code)
		}
		if stdout == "" {
			lines = strings.Split(strings.TrimRight(text, "\n"), "\n")
		}
		return styleRed.Render(status), boundLines(lines, bashFailMax, bashFailMax/2, lipgloss.NewStyle())
	}
	if len(lines) == 0 {
		return "(no output)", nil
	}
	return fmt.Sprintf("%d line(s) of output", len(lines)), boundLines(lines, 2*bashHeadTail+1, bashHeadTail, styleDim)
}

// boundLines keeps lines when there are at most max, else keep at each
// end with a count of those left out between.
func boundLines(lines []string, max, keep int, style lipgloss.Style) []string {
	var out []string
	add := func(ls []string) {
		for _, l := range ls {
			out = append(out, style.Render(l))
		}
	}
	if len(lines) <= max {
		add(lines)
		return out
	}
	add(lines[:keep])
	out = append(out, styleDim.Render(fmt.Sprintf("… %d more line(s) …", len(lines)-2*keep)))
	add(lines[len(lines)-keep:])
	return out
}

// hunkLines colours a structured patch: removals red, additions green,
// with the new file's line numbers.
func hunkLines(hunks []patchHunk) []string {
	var out []string
	for i, h := range hunks {
		if i > 0 {
			out = append(out, styleDim.Render("  ⋮"))
		}
		oldN, newN := h.OldStart, h.NewStart
		for _, l := range h.Lines {
			if len(out) >= diffMaxLines {
				out = append(out, styleDim.Render("… (diff cut)"))
				return out
			}
			switch {
			case strings.HasPrefix(l, "-"):
				out = append(out, styleDelLine.Render(fmt.Sprintf("%5d %s", oldN, l)))
				oldN++
			case strings.HasPrefix(l, "+"):
				out = append(out, styleAddLine.Render(fmt.Sprintf("%5d %s", newN, l)))
				newN++
			default:
				out = append(out, styleDim.Render(fmt.Sprintf("%5d %s", newN, l)))
				oldN++
				newN++
			}
		}
	}
	return out
}

func addedLines(content string, max int) []string {
	content = strings.TrimRight(content, "\n")
	if content == "" {
		return nil
	}
	lines := strings.Split(content, "\n")
	var out []string
	for i, l := range lines {
		if i == max {
			out = append(out, styleDim.Render(fmt.Sprintf("… +%d line(s)", len(lines)-max)))
			break
		}
		out = append(out, styleAddLine.Render(fmt.Sprintf("%5d +%s", i+1, l)))
	}
	return out
}

// proposedDiff is the change a Write, Edit or MultiEdit call would make,
// computed from its input and the file on disk, for a permission prompt;
// nil when there is nothing to show.
func proposedDiff(name string, input json.RawMessage, cwd string) []string {
	var in struct {
		FilePath   string `json:"file_path"`
		Content    string `json:"content"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
		Edits      []struct {
			OldString  string `json:"old_string"`
			NewString  string `json:"new_string"`
			ReplaceAll bool   `json:"replace_all"`
		} `json:"edits"`
		NewSource string `json:"new_source"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	if name == "NotebookEdit" {
		return addedLines(in.NewSource, diffMaxLines)
	}
	if in.FilePath == "" {
		return nil
	}
	path := in.FilePath
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	oldB, err := os.ReadFile(path)
	if err != nil && name != "Write" {
		return nil
	}
	old := string(oldB)
	replace := func(s, o, n string, all bool) string {
		if all {
			return strings.ReplaceAll(s, o, n)
		}
		return strings.Replace(s, o, n, 1)
	}
	var updated string
	switch name {
	case "Write":
		if err != nil {
			return addedLines(in.Content, diffMaxLines)
		}
		updated = in.Content
	case "Edit":
		updated = replace(old, in.OldString, in.NewString, in.ReplaceAll)
	case "MultiEdit":
		updated = old
		for _, e := range in.Edits {
			updated = replace(updated, e.OldString, e.NewString, e.ReplaceAll)
		}
	default:
		return nil
	}
	if updated == old {
		return nil
	}
	return unifiedLines(old, updated)
}

// unifiedLines is the coloured unified diff of old and updated.
func unifiedLines(old, updated string) []string {
	var hunks []patchHunk
	for _, l := range strings.Split(udiff.Unified("a", "b", old, updated), "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"), l == "":
		case strings.HasPrefix(l, "@@"):
			var h patchHunk
			var a, b int
			if n, _ := fmt.Sscanf(l, "@@ -%d,%d +%d", &h.OldStart, &a, &h.NewStart); n < 3 {
				_, _ = fmt.Sscanf(l, "@@ -%d +%d", &h.OldStart, &h.NewStart)
			}
			_ = b
			hunks = append(hunks, h)
		case len(hunks) > 0 && (l[0] == '-' || l[0] == '+' || l[0] == ' '):
			hunks[len(hunks)-1].Lines = append(hunks[len(hunks)-1].Lines, l)
		}
	}
	return hunkLines(hunks)
}

// foreignEscape matches what a terminal acts on in text that came from a
// tool (a command's output, a file, a page) rather than from the UI: an
// escape sequence other than a colour (SGR), and a control character
// other than a tab or a newline, C1 ones included. A sandboxed command
// cannot open the terminal, but chat shows its output there: OSC 52
// would set the clipboard the user pastes into a shell next, a title or a
// hyperlink would hide where it leads, a cursor move, a clear or a
// carriage return would redraw the screen as the command likes (a
// permission question that is not there).
// Built on first use: serve links this package but never shows a screen.
var foreignEscape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]?|[\x00-\x08\x0b-\x1f\x7f\x{80}-\x{9f}]`)
})

// colourSeq matches a colour sequence (SGR), which is kept.
var colourSeq = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\x1b\[[0-9;:]*m$`) })

// terminalSafe is s without what a terminal would act on besides colours
// (foreignEscape).
func terminalSafe(s string) string {
	if !strings.ContainsAny(s, "\x1b\x7f") && strings.IndexFunc(s, func(r rune) bool {
		return r < 0x20 && r != '\t' && r != '\n' || r >= 0x80 && r <= 0x9f
	}) < 0 {
		return s
	}
	return foreignEscape().ReplaceAllStringFunc(s, func(m string) string {
		if colourSeq().MatchString(m) {
			return m
		}
		return ""
	})
}

package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// What the user reads of a finished call: a short outcome line per tool,
// with paths relative to the project, where the tools' text is written
// for the model (tagged fields, advice on how to call again, where output
// files lie). The model's text stays one key away (Ctrl-O).

// relPaths writes the absolute paths in s that lie in cwd relative to it,
// and those in the home directory from ~.
func relPaths(s, cwd string) string {
	sep := string(filepath.Separator)
	if cwd != "" && cwd != sep {
		s = replacePathPrefix(s, strings.TrimSuffix(cwd, sep)+sep, "")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != sep {
		s = replacePathPrefix(s, strings.TrimSuffix(home, sep)+sep, "~"+sep)
	}
	return s
}

// replacePathPrefix replaces prefix where it begins a path in s (not in the
// middle of one, as /b/a/ holds /a/).
func replacePathPrefix(s, prefix, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if i > 0 && isPathByte(s[i-1]) {
			b.WriteString(prefix)
		} else {
			b.WriteString(with)
		}
		s = s[i+len(prefix):]
	}
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/~", c) >= 0
}

// callLabelIn is the call's line as the user reads it: CallLabel with
// paths relative to cwd, and a background task's tools named by the task
// they act on rather than by their arguments' JSON.
func callLabelIn(name string, input []byte, cwd string) string {
	switch name {
	case "TaskInput", "TaskOutput", "TaskStop":
		var in struct {
			TaskID  string `json:"task_id"`
			ShellID string `json:"shell_id"`
			Input   string `json:"input"`
		}
		_ = json.Unmarshal(input, &in)
		id := in.TaskID
		if id == "" {
			id = in.ShellID
		}
		if id == "" {
			break
		}
		if name == "TaskInput" {
			return fmt.Sprintf("%s(%s: %s)", name, id, visibleInput(in.Input))
		}
		return name + "(" + id + ")"
	}
	// The path is made relative before the label is cut to its length.
	var args map[string]any
	if json.Unmarshal(input, &args) == nil {
		changed := false
		for _, k := range []string{"file_path", "notebook_path", "path"} {
			if p, ok := args[k].(string); ok && filepath.IsAbs(p) {
				if rel := relPaths(p, cwd); rel != p {
					args[k], changed = rel, true
				}
			}
		}
		if changed {
			input, _ = json.Marshal(args)
		}
	}
	return relPaths(CallLabel(name, input), cwd)
}

// wrapIndented wraps line to width columns at word boundaries, each
// wrapped part indented by indent (for the model's text on Ctrl-O, which
// would otherwise wrap at the screen's edge under the call's line).
func wrapIndented(line, indent string, width int) string {
	if width <= len(indent)+10 || ansi.StringWidth(indent+line) <= width {
		return indent + line
	}
	wrapped := ansi.Wrap(line, width-len(indent), "")
	return indent + strings.ReplaceAll(wrapped, "\n", "\n"+indent)
}

// visibleInput is typed input on one line: Enter as ⏎, other control keys
// as ^X, cut to 40 characters.
func visibleInput(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			b.WriteString("⏎")
		case r < 0x20:
			b.WriteString("^" + string(rune(r+'@')))
		case r == 0x7f:
			b.WriteString("^?")
		default:
			b.WriteRune(r)
		}
	}
	if r := []rune(b.String()); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return b.String()
}

// failedLine is a failed call's outcome: its error's first sentence,
// without the advice to the model that follows, paths made relative; a
// file tool's says what failed ("Edit failed: ...").
func failedLine(name, text, cwd string) string {
	s := relPaths(firstSentence(text), cwd)
	if changesFiles(name) {
		s = name + " failed: " + s
	}
	return s
}

// backgroundOutcome is the outcome of a command started in the
// background: its task, whether it got ready (wait_for), and the output
// so far.
func backgroundOutcome(id, text string, obj map[string]json.RawMessage) (string, []string) {
	status := "Running in the background as " + id
	head := firstLine(text)
	switch {
	case strings.HasPrefix(head, "Task "+id+" is ready: "):
		status += " · ready: " + firstSentence(strings.TrimPrefix(head, "Task "+id+" is ready: "))
	case strings.HasPrefix(head, "Task "+id+" is not ready yet: "):
		status += " · not ready yet: " + firstSentence(strings.TrimPrefix(head, "Task "+id+" is not ready yet: "))
	}
	var stdout string
	_ = json.Unmarshal(obj["stdout"], &stdout)
	return status, outputLines(stdout)
}

// outputLines is a command's output as shown: its head and tail.
func outputLines(out string) []string {
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return nil
	}
	return boundLines(strings.Split(out, "\n"), 2*bashHeadTail+1, bashHeadTail, styleDim)
}

// taskOutcome is TaskInput's and TaskOutput's outcome: the task's state
// and its new output, from the structured output rather than the tagged
// text.
func taskOutcome(obj map[string]json.RawMessage) (string, []string, bool) {
	var retrieval string
	var task struct {
		TaskID   string `json:"task_id"`
		Status   string `json:"status"`
		ExitCode *int   `json:"exitCode"`
		Output   string `json:"output"`
	}
	if json.Unmarshal(obj["retrieval_status"], &retrieval) != nil || json.Unmarshal(obj["task"], &task) != nil || task.TaskID == "" {
		return "", nil, false
	}
	status := task.TaskID + " " + task.Status
	if task.ExitCode != nil {
		status += fmt.Sprintf(" (exit code %d)", *task.ExitCode)
	}
	switch retrieval {
	case "timeout":
		status += " · still waiting at the timeout"
	case "not_ready":
		status += " · not ready"
	}
	lines := outputLines(task.Output)
	if len(lines) == 0 {
		status += " · no new output"
	} else {
		status += " · " + countOf(strings.Count(strings.TrimRight(task.Output, "\n"), "\n")+1, "new line")
	}
	return status, lines, true
}

// writeOutcome is Write's outcome: "Wrote src/x.go (12 lines)" for a new
// file, "Updated src/x.go (12 lines)" for a replaced one.
func writeOutcome(obj map[string]json.RawMessage, cwd string) (string, bool) {
	var typ, path string
	var lines int
	if json.Unmarshal(obj["type"], &typ) != nil || json.Unmarshal(obj["filePath"], &path) != nil || path == "" {
		return "", false
	}
	_ = json.Unmarshal(obj["lines"], &lines)
	verb := "Wrote"
	if typ == "update" {
		verb = "Updated"
	}
	return fmt.Sprintf("%s %s (%s)", verb, relPaths(path, cwd), countOf(lines, "line")), true
}

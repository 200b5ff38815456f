package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func plain(lines []string) string { return sgr.ReplaceAllString(strings.Join(lines, "\n"), "") }

func TestResultDetail_bash(t *testing.T) {
	t.Parallel()
	many := make([]string, 50)
	for i := range many {
		many[i] = fmt.Sprintf("line %d", i+1)
	}
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		name       string
		stdout     string
		exit       *int
		isErr      bool
		wantStatus string
		want, not  []string
	}{
		{"short success shows all", "a\nb", code(0), false, "2 line(s) of output", []string{"a", "b"}, nil},
		{"long success keeps head and tail", strings.Join(many, "\n"), code(0), false, "50 line(s) of output",
			[]string{"line 1", "line 4", "… 42 more line(s) …", "line 47", "line 50"}, []string{"line 5\n", "line 46"}},
		{"failure shows everything", strings.Join(many, "\n"), code(1), true, "Exit code 1", []string{"line 1", "line 25", "line 50"}, []string{"more line"}},
		{"no output", "", code(0), false, "(no output)", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := orchestrator.Outcome{Call: orchestrator.Call{Name: "Bash"},
				Result: &tools.Result{IsError: tc.isErr, Text: "x", Output: map[string]any{"stdout": tc.stdout, "exitCode": tc.exit}}}
			status, detail := resultDetail(out, "")
			if got := sgr.ReplaceAllString(status, ""); got != tc.wantStatus {
				t.Errorf("status %q, want %q", got, tc.wantStatus)
			}
			text := plain(detail) + "\n"
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("detail lacks %q:\n%s", w, text)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(text, n) {
					t.Errorf("detail has %q:\n%s", n, text)
				}
			}
		})
	}
}

func TestResultDetail_edit_patch_and_new_file(t *testing.T) {
	t.Parallel()
	in, _ := json.Marshal(map[string]any{"file_path": "a.go", "content": "x\ny\n"})
	out := orchestrator.Outcome{Call: orchestrator.Call{Name: "Write", Input: in}, Result: &tools.Result{Text: "Wrote a.go", Output: map[string]any{}}}
	if _, d := resultDetail(out, ""); plain(d) != "    1 +x\n    2 +y" {
		t.Errorf("new file: %q", plain(d))
	}
	out = orchestrator.Outcome{Call: orchestrator.Call{Name: "Edit"}, Result: &tools.Result{Text: "Edited a.go: 1 replacement. The lines around the change now read:\n3\tkeep", Output: map[string]any{
		"structuredPatch": []map[string]any{{"oldStart": 3, "newStart": 3, "lines": []string{" keep", "-old", "+new", "+more"}}}}}}
	status, d := resultDetail(out, "")
	if status != "Edited a.go: 1 replacement · 2 additions, 1 removal" {
		t.Errorf("status %q", status)
	}
	if want := "    3  keep\n    4 -old\n    4 +new\n    5 +more"; plain(d) != want {
		t.Errorf("patch:\n%s\nwant:\n%s", plain(d), want)
	}
	if !strings.HasPrefix(d[1], "\x1b[31m") || !strings.HasPrefix(d[2], "\x1b[32m") {
		t.Errorf("removal and addition not red and green: %q", d)
	}
}

func TestProposedDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("a\nb\nc\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool, input, want string
	}{
		{"edit first", "Edit", `{"file_path":"f.txt","old_string":"b","new_string":"B"}`, " a\n-b\n+B\n c\n b"},
		{"edit all", "Edit", `{"file_path":"f.txt","old_string":"b","new_string":"B","replace_all":true}`, " a\n-b\n+B\n c\n-b\n+B"},
		{"multiedit", "MultiEdit", `{"file_path":"f.txt","edits":[{"old_string":"a","new_string":"A"},{"old_string":"c","new_string":"C"}]}`, "-a\n+A\n b\n-c\n+C\n b"},
		{"write new", "Write", `{"file_path":"new.txt","content":"hello\n"}`, "+hello"},
		{"missing file", "Edit", `{"file_path":"nope.txt","old_string":"b","new_string":"B"}`, ""},
		{"no change", "Edit", `{"file_path":"f.txt","old_string":"zz","new_string":"B"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := regexp.MustCompile(`(?m)^\s*\d+ `).ReplaceAllString(plain(proposedDiff(tc.tool, json.RawMessage(tc.input), dir)), "")
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestAttachFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A\n"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "bin"), []byte{0xff, 0xfe, 0}, 0o600)
	_ = os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	got, files := attachFiles("see @a.txt, @sub @bin @missing and @a.txt", dir)
	if strings.Join(files, ",") != "a.txt" {
		t.Errorf("attached %v, want only a.txt (once)", files)
	}
	if want := "see @a.txt, @sub @bin @missing and @a.txt\n\n<file path=\"a.txt\">\nA\n</file>"; got != want {
		t.Errorf("prompt %q", got)
	}
}

func TestCustomCommands(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		_ = os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude/commands/fix.md"), "home fix")
	write(filepath.Join(dir, ".claude/commands/fix.md"), "---\ndescription: \"Fix it\"\n---\nFix $ARGUMENTS now, $ARGUMENTS!")
	write(filepath.Join(home, ".claude/commands/ops/deploy.md"), "# Deploy\nShip it.")
	cs := customCommands(dir, home)
	if len(cs) != 2 || cs[0].name != "fix" || cs[0].description != "Fix it" || cs[1].name != "ops:deploy" || cs[1].description != "Deploy" {
		t.Fatalf("commands %+v", cs)
	}
	if p, _ := expandCommand(cs[0], "the bug"); p != "Fix the bug now, the bug!" {
		t.Errorf("fix: %q", p)
	}
	if p, _ := expandCommand(cs[1], ""); p != "# Deploy\nShip it." {
		t.Errorf("deploy: %q", p)
	}
}

func TestPriceOf(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]float64{"anthropic/claude-sonnet-4-5": 3, "openai/gpt-4.1-mini": 0.4, "openai/gpt-4.1": 2, "claude-opus-4-1": 15} {
		if p, ok := priceOf(model); !ok || p.in != want {
			t.Errorf("%s: %+v %v, want input price %v", model, p, ok, want)
		}
	}
	if _, ok := priceOf("ollama/qwen3"); ok {
		t.Error("an unknown model has a price")
	}
}

func TestHistoryFile(t *testing.T) {
	t.Parallel()
	path := HistoryPath(t.TempDir(), "/some/project")
	appendHistory(path, "first")
	appendHistory(path, "two\nlines")
	if got := loadHistory(path); len(got) != 2 || got[1] != "two\nlines" {
		t.Errorf("history %q", got)
	}
	if HistoryPath("/s", "/a") == HistoryPath("/s", "/b") {
		t.Error("two projects share a history file")
	}
}

func TestCompletePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "main.go"), nil, 0o600)
	_ = os.WriteFile(filepath.Join(dir, "make.sh"), nil, 0o600)
	_ = os.WriteFile(filepath.Join(dir, ".hidden"), nil, 0o600)
	_ = os.Mkdir(filepath.Join(dir, "manual"), 0o700)
	if got := strings.Join(completePath(dir, "ma"), " "); got != "main.go make.sh manual/" {
		t.Errorf("completions %q", got)
	}
	if got := completePath(dir, ""); len(got) != 3 {
		t.Errorf("hidden files offered without a dot: %q", got)
	}
}

func TestWriter_prints_whole_lines(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	u := New(strings.NewReader(""), &out)
	w := u.Writer()
	_, _ = w.Write([]byte("warning: a\nwarning: b"))
	if got := out.String(); got != "warning: a\n" {
		t.Errorf("after a line and a half: %q", got)
	}
	_, _ = w.Write([]byte(" continued\n"))
	if got := out.String(); got != "warning: a\nwarning: b continued\n" {
		t.Errorf("after the rest: %q", got)
	}
}

func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext":                             "plain\ttext",
		"\x1b[31mred\x1b[0m":                      "\x1b[31mred\x1b[0m",
		"a\x1b]52;c;ZWNobw==\x07b":                "ab",
		"a\x1b]0;title\x1b\\b":                    "ab",
		"a\x1b]8;;http://x/\x1b\\l\x1b]8;;\x1b\\": "al",
		"a\x1b[2J\x1b[Hb":                         "ab",
		"five\rSIX":                               "fiveSIX",
		"x\u009b2Jy":                              "x2Jy",
		"e\x1bc\x1b7f\x1b(Bg":                     "efg",
		"h\x1bPq#0\x1b\\i":                        "hi",
		"bell\x07del\x7f":                         "belldel",
		"unicode é ✓":                             "unicode é ✓",
	} {
		if got := terminalSafe(in); got != want {
			t.Errorf("terminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRelPathsAndLabels(t *testing.T) {
	t.Parallel()
	home, _ := os.UserHomeDir()
	cwd := "/work/proj"
	for _, tc := range []struct{ in, want string }{
		{"old_string was not found in /work/proj/src/x.go", "old_string was not found in src/x.go"},
		{"/work/proj/a and /other/work/proj/b", "a and /other/work/proj/b"},
		{"/work/project/x", "/work/project/x"},
		{home + "/notes.txt", "~/notes.txt"},
	} {
		if got := relPaths(tc.in, cwd); got != tc.want {
			t.Errorf("relPaths(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := "/work/proj/" + strings.Repeat("d/", 50) + "f.go"
	for _, tc := range []struct{ name, input, want string }{
		{"Read", `{"file_path":"` + long + `"}`, "Read(" + strings.Repeat("d/", 39) + "d…)"},
		{"TaskInput", `{"task_id":"bash_1","input":"yes\n\u0003"}`, "TaskInput(bash_1: yes⏎^C)"},
		{"TaskStop", `{"task_id":"bash_2"}`, "TaskStop(bash_2)"},
	} {
		if got := callLabelIn(tc.name, []byte(tc.input), cwd); got != tc.want {
			t.Errorf("callLabelIn(%s, %s) = %q, want %q", tc.name, tc.input, got, tc.want)
		}
	}
}

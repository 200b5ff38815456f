package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

func TestBash_output_and_exit_codes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		command     string
		setup       map[string]string // files to create
		want        string
		isError     bool
		exit        int
		interpreted string
	}{
		{name: "stdout", command: "echo hello", want: "hello"},
		{name: "stderr_merged_in_order", command: "echo out; echo err >&2; echo out2", want: "out\nerr\nout2"},
		{name: "leading_blank_lines_trimmed", command: `printf '\n \n\t\n  indented\n'`, want: "  indented"},
		{name: "trailing_whitespace_trimmed", command: `printf 'a\nb  \n\n\t\n'`, want: "a\nb"},
		{name: "colour_codes_kept", command: `printf '\033[31mred\033[0m\n'`, want: "\x1b[31mred\x1b[0m"},
		{name: "stdin_is_dev_null", command: "cat; echo after", want: "after"},
		{name: "no_output", command: "true", want: "(Bash completed with no output)"},
		{name: "nonzero_exit_is_error", command: "echo boom; exit 3", want: "Exit code 3\nboom", isError: true, exit: 3},
		{name: "nonzero_exit_without_output", command: "exit 2", want: "Exit code 2", isError: true, exit: 2},
		{name: "false_is_error", command: "false", want: "Exit code 1", isError: true, exit: 1},
		{name: "command_not_found", command: "no-such-command-xyz", isError: true, exit: 127},
		{name: "grep_no_match_is_not_error", command: "grep nothing f.txt", setup: map[string]string{"f.txt": "abc\n"},
			want: "", exit: 1, interpreted: "No matches found"},
		{name: "grep_in_pipeline_no_match", command: "cat f.txt | grep -c zzz", setup: map[string]string{"f.txt": "abc\n"},
			want: "0", exit: 1, interpreted: "No matches found"},
		{name: "grep_missing_file_is_error", command: "grep x missing.txt", isError: true, exit: 2},
		{name: "rg_style_through_wrapper", command: "timeout 10 grep -q zzz f.txt", setup: map[string]string{"f.txt": "abc\n"},
			exit: 1, interpreted: "No matches found"},
		{name: "diff_files_differ", command: "diff a b", setup: map[string]string{"a": "1\n", "b": "2\n"},
			want: "1c1\n< 1\n---\n> 2", exit: 1, interpreted: "Files differ"},
		{name: "test_false", command: "test -f missing", exit: 1, interpreted: "Condition is false"},
		{name: "bracket_false", command: "[ 1 = 2 ]", exit: 1, interpreted: "Condition is false"},
		{name: "double_bracket_false", command: "[[ 1 == 2 ]]", exit: 1, interpreted: "Condition is false"},
		{name: "find_exit_1_is_not_error", command: "mkdir -p d/locked && chmod 000 d/locked && find d >/dev/null 2>&1; s=$?; chmod 755 d/locked; exit $s",
			exit: -1},
		{name: "grep_then_other_command_failing", command: "grep -q abc f.txt && false", setup: map[string]string{"f.txt": "abc\n"},
			want: "Exit code 1", isError: true, exit: 1},
		{name: "negated_grep_exit_1_is_error", command: "! echo x | grep -q x", want: "Exit code 1", isError: true, exit: 1},
	}
	bash := Bash(testOpts)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			for name, content := range tt.setup {
				if err := os.WriteFile(filepath.Join(s.Cwd(), name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res := mustCall(t, bash, s, map[string]any{"command": tt.command})
			out := bashOut(t, res)
			if tt.exit == -1 {
				// find's exit 1 needs an unreadable directory, which root
				// can read anyway: only check that exit 1 is not an error.
				if *out.ExitCode == 1 && res.IsError {
					t.Errorf("find exit 1 reported as an error: %q", res.Text)
				}
				return
			}
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v (text %q)", res.IsError, tt.isError, res.Text)
			}
			if tt.want != "" || tt.name == "no_output" || tt.name == "stdin_is_dev_null" {
				if res.Text != tt.want {
					t.Errorf("Text = %q, want %q", res.Text, tt.want)
				}
			}
			if out.ExitCode == nil || *out.ExitCode != tt.exit {
				t.Errorf("exitCode = %v, want %d", out.ExitCode, tt.exit)
			}
			if out.ReturnCodeInterpretation != tt.interpreted {
				t.Errorf("returnCodeInterpretation = %q, want %q", out.ReturnCodeInterpretation, tt.interpreted)
			}
			if out.Stderr != "" {
				t.Errorf("stderr = %q, want it merged into stdout", out.Stderr)
			}
		})
	}
}

func TestBash_bad_input(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"empty_command", map[string]any{"command": ""}, `parameter "command" must not be empty`},
		{"blank_command", map[string]any{"command": "  \n\t"}, "command is empty"},
		{"timeout_zero", map[string]any{"command": "true", "timeout": 0}, `parameter "timeout" must be at least 1, got 0`},
		{"timeout_too_large", map[string]any{"command": "true", "timeout": 600001}, `parameter "timeout" must be at most 600000, got 600001`},
		{"timeout_negative", map[string]any{"command": "true", "timeout": -5}, `parameter "timeout" must be at least 1, got -5`},
		{"unknown_field", map[string]any{"command": "true", "cwd": "/"}, `unknown parameter "cwd"`},
	}
	s := newSession(t)
	bash := Bash(testOpts)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := failure(call(t, context.Background(), bash, s, tt.args, nil))
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error = %q, want one containing %q", msg, tt.want)
			}
		})
	}
	t.Run("run_in_background_when_disabled", func(t *testing.T) {
		msg := failure(call(t, context.Background(), Bash(Options{DisableBackground: true}), s,
			map[string]any{"command": "true", "run_in_background": true}, nil))
		if !strings.Contains(msg, "run_in_background") {
			t.Errorf("error = %q, want run_in_background refused", msg)
		}
	})
}

func TestBash_schema_through_pipeline(t *testing.T) {
	t.Parallel()
	p := pipelineFor(t, testOpts)
	s := newSession(t)
	for _, tt := range []struct{ name, input, want string }{
		{"timeout_out_of_range", `{"command":"true","timeout":700000}`, "timeout"},
		{"missing_command", `{}`, "command"},
		{"command_wrong_type", `{"command":5}`, "command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := p.Run(context.Background(), &tools.UseContext{Session: s}, orchestrator.Call{ID: "c", Name: "Bash", Input: json.RawMessage(tt.input)}, nil)
			if out.Result == nil || !out.Result.IsError || !strings.Contains(out.Result.Text, tt.want) {
				t.Errorf("result = %+v, want an error naming %q", out.Result, tt.want)
			}
		})
	}
}

func TestBash_working_directory(t *testing.T) {
	t.Parallel()
	bash := Bash(testOpts)

	t.Run("cd_persists_inside_working_dirs", func(t *testing.T) {
		s := newSession(t)
		root := s.Cwd()
		mustCall(t, bash, s, map[string]any{"command": "mkdir -p sub/deeper && cd sub"})
		if got, want := s.Cwd(), filepath.Join(root, "sub"); got != want {
			t.Fatalf("cwd = %q, want %q", got, want)
		}
		res := mustCall(t, bash, s, map[string]any{"command": "cd deeper; pwd"})
		if want := filepath.Join(root, "sub", "deeper"); res.Text != want || s.Cwd() != want {
			t.Errorf("pwd = %q, session cwd = %q, want %q", res.Text, s.Cwd(), want)
		}
		if out := bashOut(t, res); out.Cwd != filepath.Join(root, "sub", "deeper") || out.CwdReset {
			t.Errorf("output cwd = %q reset=%v", out.Cwd, out.CwdReset)
		}
	})

	t.Run("cd_outside_resets_with_notice", func(t *testing.T) {
		s := newSession(t)
		root := s.Cwd()
		res := mustCall(t, bash, s, map[string]any{"command": "cd / && echo moved"})
		if s.Cwd() != root {
			t.Errorf("cwd = %q, want reset to %q", s.Cwd(), root)
		}
		if !strings.HasPrefix(res.Text, "moved\n") || !strings.Contains(res.Text, "reset to "+root) {
			t.Errorf("text = %q, want the output then a reset notice", res.Text)
		}
		if out := bashOut(t, res); !out.CwdReset || out.Cwd != root {
			t.Errorf("output cwd = %q reset=%v", out.Cwd, out.CwdReset)
		}
		res = mustCall(t, bash, s, map[string]any{"command": "pwd"})
		if res.Text != root {
			t.Errorf("next command ran in %q, want %q", res.Text, root)
		}
	})

	t.Run("sibling_with_common_prefix_is_outside", func(t *testing.T) {
		parent := t.TempDir()
		app := filepath.Join(parent, "app")
		evil := filepath.Join(parent, "app-evil")
		for _, d := range []string{app, evil} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		s, err := tools.NewSession(tools.SessionOptions{Cwd: app, StateRoot: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res := mustCall(t, bash, s, map[string]any{"command": "cd ../app-evil"})
		if s.Cwd() != app || !bashOut(t, res).CwdReset {
			t.Errorf("cwd = %q after cd to a sibling sharing a prefix, want reset to %q", s.Cwd(), app)
		}
	})

	t.Run("symlink_leading_outside_is_outside", func(t *testing.T) {
		s := newSession(t)
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(s.Cwd(), "link")); err != nil {
			t.Fatal(err)
		}
		root := s.Cwd()
		res := mustCall(t, bash, s, map[string]any{"command": "cd link"})
		if s.Cwd() != root || !bashOut(t, res).CwdReset {
			t.Errorf("cwd = %q after cd through a symlink leaving the working dirs, want %q", s.Cwd(), root)
		}
	})

	t.Run("additional_working_directory", func(t *testing.T) {
		extra, _ := filepath.EvalSymlinks(t.TempDir())
		main, _ := filepath.EvalSymlinks(t.TempDir())
		s, err := tools.NewSession(tools.SessionOptions{Cwd: main, WorkDirs: []string{extra}, StateRoot: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		mustCall(t, bash, s, map[string]any{"command": "cd " + extra})
		if s.Cwd() != extra {
			t.Errorf("cwd = %q, want the additional working directory %q", s.Cwd(), extra)
		}
	})

	t.Run("exit_keeps_cwd_and_status", func(t *testing.T) {
		s := newSession(t)
		mustCall(t, bash, s, map[string]any{"command": "mkdir d"})
		res := mustCall(t, bash, s, map[string]any{"command": "cd d && exit 5"})
		if !res.IsError || *bashOut(t, res).ExitCode != 5 {
			t.Errorf("exit status lost: %+v", res)
		}
		if filepath.Base(s.Cwd()) != "d" {
			t.Errorf("cwd = %q, want the directory cd'd to before exit", s.Cwd())
		}
	})

	t.Run("removed_cwd_falls_back", func(t *testing.T) {
		s := newSession(t)
		root := s.Cwd()
		mustCall(t, bash, s, map[string]any{"command": "mkdir gone && cd gone"})
		if err := os.Remove(filepath.Join(root, "gone")); err != nil {
			t.Fatal(err)
		}
		res := mustCall(t, bash, s, map[string]any{"command": "pwd"})
		if !strings.HasPrefix(res.Text, root+"\n") || !strings.Contains(res.Text, "no longer exists") || s.Cwd() != root {
			t.Errorf("text = %q, cwd = %q", res.Text, s.Cwd())
		}
	})
}

func TestBash_environment_is_non_interactive(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	res := mustCall(t, Bash(testOpts), s, map[string]any{
		"command": `echo "$GIT_EDITOR|$PAGER|$GIT_PAGER|$TERM|$GIT_TERMINAL_PROMPT|${AGENT_MCP_TASK:+marked}"`,
	})
	if res.Text != "true|cat|cat|dumb|0|marked" {
		t.Errorf("environment = %q", res.Text)
	}
	// git commit without -m must not wait for an editor.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	res = mustCall(t, Bash(testOpts), s, map[string]any{
		"command": "git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty; echo exit=$?",
	})
	if !strings.Contains(res.Text, "exit=1") {
		t.Errorf("git commit with the editor set to true: %q, want it to abort at once", res.Text)
	}
}

func TestBash_large_output(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	// 40000 characters in 4000 lines of 10.
	res := mustCall(t, Bash(testOpts), s, map[string]any{"command": `for i in $(seq 1 4000); do printf '%09d\n' $i; done`})
	if !strings.HasPrefix(res.Text, "<persisted-output>") || !strings.Contains(res.Text, "000000001\n") {
		t.Errorf("text = %.200q, want the persisted-output block with a preview", res.Text)
	}
	if saved, err := os.ReadFile(persistedPath(t, res)); err != nil || len(saved) != 39999 {
		t.Errorf("persisted file: %d bytes, %v; want the whole trimmed output (39999)", len(saved), err)
	}

	t.Run("persisted_by_the_pipeline", func(t *testing.T) {
		p := pipelineFor(t, testOpts)
		o := p.Run(context.Background(), &tools.UseContext{Session: s},
			orchestrator.Call{ID: "big", Name: "Bash", Input: json.RawMessage(`{"command":"for i in $(seq 1 4000); do printf '%09d\\n' $i; done"}`)}, nil)
		if o.Persisted == nil || !strings.HasPrefix(o.Result.Text, "<persisted-output>") {
			t.Fatalf("40000 characters not persisted: %.200q", o.Result.Text)
		}
		saved, err := os.ReadFile(o.Persisted.Path)
		if err != nil || len(saved) != 39999 {
			t.Errorf("persisted file: %d bytes, %v", len(saved), err)
		}
	})

	t.Run("past_the_result_window_the_whole_output_is_persisted", func(t *testing.T) {
		// 1.6 MB: the result keeps head and tail, the saved output is
		// all of it.
		p := pipelineFor(t, testOpts)
		o := p.Run(context.Background(), &tools.UseContext{Session: s},
			orchestrator.Call{ID: "huge", Name: "Bash", Input: json.RawMessage(`{"command":"seq 1 240000"}`)}, nil)
		if o.Persisted == nil {
			t.Fatalf("not persisted: %.200q", o.Result.Text)
		}
		saved, err := os.ReadFile(o.Persisted.Path)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for i := 1; i <= 240000; i++ {
			fmt.Fprintf(&want, "%d\n", i)
		}
		if string(saved) != want.String() || o.Persisted.Size != int64(want.Len()) {
			t.Errorf("persisted %d bytes (size %d), want the whole %d", len(saved), o.Persisted.Size, want.Len())
		}
		if strings.Contains(o.Result.Text, "output cap") {
			t.Errorf("a complete output is said to be cut: %q", o.Result.Text)
		}
	})

	t.Run("past_the_task_output_cap_the_block_says_so", func(t *testing.T) {
		opts := testOpts
		opts.OutputFileLimit = 1200 << 10
		p := pipelineFor(t, opts)
		o := p.Run(context.Background(), &tools.UseContext{Session: s},
			orchestrator.Call{ID: "capped", Name: "Bash", Input: json.RawMessage(`{"command":"head -c 2000000 /dev/zero | tr '\\0' x"}`)}, nil)
		if o.Persisted == nil {
			t.Fatalf("not persisted: %.200q", o.Result.Text)
		}
		if !strings.Contains(o.Result.Text, "The command printed 1.9MB; the saved output stops at the task output cap of 1.2MB") {
			t.Errorf("the block does not state the cap: %q", o.Result.Text[:min(len(o.Result.Text), 400)])
		}
		saved, err := os.ReadFile(o.Persisted.Path)
		if err != nil || !bytes.HasPrefix(saved, bytes.Repeat([]byte("x"), 1200<<10)) || !bytes.Contains(saved, []byte("more output was dropped")) {
			t.Errorf("persisted %d bytes, %v", len(saved), err)
		}
	})

	t.Run("just_under_the_budget_stays_inline", func(t *testing.T) {
		p := pipelineFor(t, testOpts)
		o := p.Run(context.Background(), &tools.UseContext{Session: s},
			orchestrator.Call{ID: "fits", Name: "Bash", Input: json.RawMessage(`{"command":"head -c 30000 /dev/zero | tr '\\0' x"}`)}, nil)
		if o.Persisted != nil || len(o.Result.Text) != 30000 {
			t.Errorf("30000 characters: persisted=%v, text length %d", o.Persisted != nil, len(o.Result.Text))
		}
	})

	t.Run("long_error_output_is_cut_in_the_middle", func(t *testing.T) {
		res := mustCall(t, Bash(testOpts), s, map[string]any{"command": `seq 1 20000; exit 1`})
		if !res.IsError || len(res.Text) > BashMaxResultSizeChars+500 {
			t.Fatalf("error text of %d characters", len(res.Text))
		}
		if !strings.HasPrefix(res.Text, "Exit code 1\n1\n2\n") || !strings.HasSuffix(res.Text, "\n20000") ||
			!strings.Contains(res.Text, bashOut(t, res).OutputFile) {
			t.Errorf("error text should keep head, tail and name the output file: %.100q ... %.100q", res.Text, res.Text[len(res.Text)-100:])
		}
	})
}

func TestBash_progress_reports_latest_line(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	gate := filepath.Join(s.Cwd(), "gate")
	opts := testOpts
	opts.ProgressInterval = 10_000_000 // 10ms
	var mu sync.Mutex
	var messages []string
	progress := func(u tools.ProgressUpdate) {
		mu.Lock()
		defer mu.Unlock()
		messages = append(messages, u.Message)
		if u.Message == "step two" {
			_ = os.WriteFile(gate, nil, 0o644)
		}
	}
	res := call(t, context.Background(), Bash(opts), s, map[string]any{
		"command": "echo step one; echo step two; while [ ! -f gate ]; do sleep 0.01; done; echo finished",
	}, progress)
	if res.Text != "step one\nstep two\nfinished" {
		t.Errorf("text = %q", res.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(messages, "step two") {
		t.Errorf("progress messages = %q, want the latest line (step two) reported", messages)
	}
}

func TestBash_read_only_and_concurrency(t *testing.T) {
	t.Parallel()
	bash := Bash(testOpts)
	for _, tt := range []struct {
		command string
		want    bool
	}{
		{"ls -la && git status", true},
		{"cat go.mod | grep module", true},
		{"find . -name '*.go'", true},
		{"find . -delete", false},
		{"echo x > f", false},
		{"rm -rf x", false},
		{"ls &&", false},
		{"$(echo rm) x", false},
	} {
		in, err := bash.Decode(json.RawMessage(`{"command":` + quoteJSON(tt.command) + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := in.ReadOnly(); got != tt.want {
			t.Errorf("IsReadOnly(%q) = %v, want %v", tt.command, got, tt.want)
		}
		if got := in.ConcurrencySafe(); got != tt.want {
			t.Errorf("IsConcurrencySafe(%q) = %v, want %v", tt.command, got, tt.want)
		}
	}
	if !bash.AbortsSiblingsOnError || bash.MaxResultSizeChars != 30000 {
		t.Errorf("Bash spec: aborts siblings %v, budget %d", bash.AbortsSiblingsOnError, bash.MaxResultSizeChars)
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{
		120_000: "2m", 90_000: "1m30s", 45_000: "45s", 1_500: "1.5s", 250: "250ms", 600_000: "10m",
	} {
		if got := formatDuration(msDuration(in)); got != want {
			t.Errorf("formatDuration(%dms) = %q, want %q", in, got, want)
		}
	}
}

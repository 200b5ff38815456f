package shell

import (
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
)

// TestJudgeTyped: what is typed into a shell is judged as the line the
// shell will run (the unentered part of earlier input in front); what its
// line editor or history would turn into other text cannot be judged, and
// a line that changes how later lines are read makes them unjudgeable.
func TestJudgeTyped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		inputs      []string
		line        string // the last input's judged line
		opaque      bool   // the last input cannot be judged
		stickyAfter bool   // later inputs cannot be judged
	}{
		{"a line", []string{"ls\n"}, "ls\n", false, false},
		{"split", []string{"r", "m x\n"}, "rm x\n", false, false},
		{"carriage return", []string{"rm x\r"}, "rm x\n", false, false},
		{"ctrl-c drops the line", []string{"r", "\x03", "m x\n"}, "m x\n", false, false},
		{"line editing", []string{"#rm x\x01\x04\n"}, "", true, true},
		{"arrow key", []string{"\x1b[A\n"}, "", true, true},
		{"non-ASCII", []string{"ls \u00e9\n"}, "", true, true},
		{"history", []string{"!!\n"}, "", true, true},
		{"quick substitution", []string{"^a^b\n"}, "", true, true},
		{"prompt command", []string{"PROMPT_COMMAND=x\n"}, "", true, true},
		{"continued", []string{"r\\\n"}, "", true, true},
		{"incomplete loop", []string{"for i in 1; do\n"}, "", true, true},
		{"alias", []string{"alias ls=rm\n"}, "alias ls=rm\n", false, true},
		{"after alias", []string{"alias ls=rm\n", "ls x\n"}, "", true, true},
		{"assignment", []string{"r=rm\n"}, "r=rm\n", false, true},
		{"function", []string{"f() { ls; }\n"}, "f() { ls; }\n", false, true},
		{"cd", []string{"cd /\n"}, "cd /\n", false, true},
		{"an interpreter", []string{"python3\n"}, "python3\n", false, true},
		{"escaped backslash", []string{"echo a\\\\\n"}, "echo a\\\\\n", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var st typedState
			var j typedJudgement
			for i, in := range c.inputs {
				var gen uint64
				j, gen = judgeTyped(&st, in)
				if i < len(c.inputs)-1 && j.opaque == "" && !st.typed(gen, j) {
					t.Fatal("typed refused")
				}
			}
			if (j.opaque != "") != c.opaque {
				t.Errorf("opaque = %q, want %v", j.opaque, c.opaque)
			}
			if !c.opaque && j.line != c.line {
				t.Errorf("line = %q, want %q", j.line, c.line)
			}
			if (j.after != "") != c.stickyAfter {
				t.Errorf("after = %q, want %v", j.after, c.stickyAfter)
			}
		})
	}
}

// TestTypedState_interleaved: an input judged before another was written
// is not written after it.
func TestTypedState_interleaved(t *testing.T) {
	t.Parallel()
	var st typedState
	ja, ga := judgeTyped(&st, "r")
	jb, gb := judgeTyped(&st, "m x\n")
	if !st.typed(ga, ja) {
		t.Fatal("the first input was refused")
	}
	if st.typed(gb, jb) {
		t.Fatal("an input judged without the one written before it was accepted")
	}
	if j, _ := judgeTyped(&st, "m x\n"); j.line != "rm x\n" {
		t.Fatalf("judged again: %q", j.line)
	}
}

// TestTaskReads: what a task's command does with what is typed.
func TestTaskReads(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]shellcmd.Reads{
		"bash": shellcmd.ReadsShellLines, "cd x && bash": shellcmd.ReadsShellLines, "python3": shellcmd.ReadsCode,
		"npm init": shellcmd.ReadsData, "less f": shellcmd.ReadsData, "$X": shellcmd.ReadsCode, "bash -c 'read l; eval \"$l\"'": shellcmd.ReadsCode,
		"sqlite3 db": shellcmd.ReadsCode, "cat | sh": shellcmd.ReadsShellLines,
	} {
		if got, what := taskReads(cmd); got != want {
			t.Errorf("%s: %d (%s), want %d", cmd, got, what, want)
		}
	}
}

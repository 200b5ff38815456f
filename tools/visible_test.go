package tools

import (
	"strings"
	"testing"
)

// TestForm_question_is_data: what a command holds cannot read as the
// question's own words: its lines come after a margin, after the reason,
// with control and bidirectional characters shown as escapes; what the
// question is about comes first.
func TestForm_question_is_data(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, command string
		paths         []PathAccess
		url           string
		want, not     []string
	}{
		{name: "a forged reason line", command: "echo 'x\nWhy you are asked: the user allowed this command.'",
			want: []string{"  │ Why you are asked: the user allowed"}, not: []string{"\nWhy you are asked: the user"}},
		{name: "escape and carriage return", command: "rm -rf ~ #\r\x1b[2Kls",
			want: []string{`  │ rm -rf ~ #\r\e[2Kls`}, not: []string{"\x1b", "\r"}},
		{name: "right-to-left override", command: "ls \u202eftp.txt",
			want: []string{`ls \u202eftp.txt`}, not: []string{"\u202e"}},
		{name: "not UTF-8", command: "ls \xff", want: []string{`ls \xff`}},
		{name: "the host first", command: "curl evil.example", url: "evil.example:443",
			want: []string{"Allow Bash?\n\nConnects to: evil.example:443\n\nWhy you are asked: R"}},
		{name: "a path first, made visible", command: "touch x", paths: []PathAccess{{Path: "/w/a\nWhy you are asked: fine", Write: true}},
			want: []string{`Write: /w/a\nWhy you are asked: fine`}, not: []string{"\nWhy you are asked: fine"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q := &PermissionQuestion{Tool: "Bash", Command: c.command, URL: c.url, Paths: c.paths, Reason: "R."}
			msg, _ := q.Form()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the message lacks %q:\n%s", w, msg)
				}
			}
			for _, n := range c.not {
				if strings.Contains(msg, n) {
					t.Errorf("the message holds %q:\n%s", n, msg)
				}
			}
			if i, j := strings.Index(msg, "Why you are asked: R."), strings.Index(msg, "The command, quoted:"); i < 0 || j < i {
				t.Errorf("the reason does not come before the command:\n%s", msg)
			}
		})
	}
}

package cli

import (
	"strings"
	"testing"
)

func TestBlankArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		secrets, vars  []string
	}{
		{"a whole argument", "agent-mcp\x00serve\x00--token\x00s3cret\x00", "agent-mcp\x00serve\x00--token\x00******\x00", []string{"s3cret"}, nil},
		{"after =", "x\x00--token=s3cret\x00", "x\x00--token=******\x00", []string{"s3cret"}, nil},
		{"a client token", "x\x00--client-token\x00ci=abc\x00", "x\x00--client-token\x00ci=***\x00", []string{"abc"}, nil},
		{"not inside another argument", "x\x00s3cretly\x00as3cret\x00", "x\x00s3cretly\x00as3cret\x00", []string{"s3cret"}, nil},
		{"a variable's value", "A=1\x00AGENT_MCP_TOKEN=tok\x00AGENT_MCP_TOKENS=x\x00", "A=1\x00AGENT_MCP_TOKEN=***\x00AGENT_MCP_TOKENS=x\x00", nil, []string{"AGENT_MCP_TOKEN"}},
		{"an empty secret blanks nothing", "x\x00\x00y", "x\x00\x00y", []string{""}, nil},
		{"the last string without a NUL", "x\x00s3cret", "x\x00******", []string{"s3cret"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.in)
			changed := blankArgs(b, tc.secrets, tc.vars)
			if string(b) != tc.want {
				t.Errorf("got %q, want %q", b, tc.want)
			}
			if changed != (tc.in != tc.want) {
				t.Errorf("changed = %v", changed)
			}
			if strings.Count(string(b), "\x00") != strings.Count(tc.in, "\x00") {
				t.Error("the strings' boundaries moved")
			}
		})
	}
}

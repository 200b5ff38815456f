package search

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
)

// TestPaths checks what Glob and Grep tell the permission check they
// read: for Glob, the fixed directory prefix of the pattern joined with
// path; for Grep, path or the current directory.
func TestPaths(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	sess, err := tools.NewSession(tools.SessionOptions{Cwd: cwd, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	withSession := &tools.UseContext{Session: sess}
	j := func(p ...string) string { return filepath.Join(append([]string{cwd}, p...)...) }

	tests := []struct {
		tool  *tools.Tool
		name  string
		input string
		uc    *tools.UseContext
		want  string
	}{
		{Glob(), "no_path_no_slash", `{"pattern": "*.go"}`, withSession, cwd},
		{Glob(), "no_path_any_depth", `{"pattern": "**/*.go"}`, withSession, cwd},
		{Glob(), "fixed_prefix", `{"pattern": "src/pkg/**/*.go"}`, withSession, j("src", "pkg")},
		{Glob(), "dot_slash_prefix", `{"pattern": "./src/*.go"}`, withSession, j("src")},
		{Glob(), "absolute_pattern_without_path", `{"pattern": "/etc/**"}`, withSession, "/etc"},
		{Glob(), "absolute_pattern_overrides_path", `{"pattern": "/etc/**", "path": "src"}`, withSession, "/etc"},
		{Glob(), "absolute_literal_file", `{"pattern": "/etc/passwd"}`, withSession, "/etc"},
		{Glob(), "dotdot_pattern", `{"pattern": "../**/*.key"}`, withSession, filepath.Dir(cwd)},
		{Glob(), "dotdot_inside_prefix", `{"pattern": "src/../../x/*"}`, withSession, filepath.Join(filepath.Dir(cwd), "x")},
		{Glob(), "relative_path", `{"pattern": "*.go", "path": "src"}`, withSession, j("src")},
		{Glob(), "relative_path_and_prefix", `{"pattern": "a/b/*.go", "path": "src"}`, withSession, j("src", "a", "b")},
		{Glob(), "absolute_path", `{"pattern": "**/*", "path": "/var/log"}`, withSession, "/var/log"},
		{Glob(), "path_going_up", `{"pattern": "*", "path": "../.."}`, withSession, filepath.Dir(filepath.Dir(cwd))},
		{Glob(), "whitespace_path_is_cwd", `{"pattern": "*", "path": "  "}`, withSession, cwd},
		{Glob(), "tilde_in_pattern_is_literal", `{"pattern": "~/x/*"}`, withSession, j("~", "x")},
		{Glob(), "without_session_relative", `{"pattern": "../*.go"}`, &tools.UseContext{}, ".."},
		{Glob(), "without_session_tilde_pattern", `{"pattern": "~/x/*"}`, &tools.UseContext{}, "./~/x"},
		{Glob(), "without_session_tilde_path", `{"pattern": "*", "path": "~/x"}`, &tools.UseContext{}, "~/x"},
		{Glob(), "nil_use_context", `{"pattern": "/etc/*"}`, nil, "/etc"},
		{Grep(), "no_path", `{"pattern": "x"}`, withSession, cwd},
		{Grep(), "whitespace_path", `{"pattern": "x", "path": " "}`, withSession, cwd},
		{Grep(), "absolute_path", `{"pattern": "root", "path": "/etc"}`, withSession, "/etc"},
		{Grep(), "relative_path", `{"pattern": "x", "path": "src/a.go"}`, withSession, "src/a.go"},
		{Grep(), "going_up", `{"pattern": "x", "path": "../other"}`, withSession, "../other"},
		{Grep(), "glob_does_not_widen", `{"pattern": "x", "glob": "/etc/**"}`, withSession, cwd},
		{Grep(), "without_session", `{"pattern": "x"}`, &tools.UseContext{}, "."},
	}
	for _, tt := range tests {
		t.Run(tt.tool.Name+"/"+tt.name, func(t *testing.T) {
			in, err := tt.tool.Decode(json.RawMessage(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := tools.Paths(in, tt.uc)
			if !ok {
				t.Fatalf("%s's input does not implement tools.PathInput", tt.tool.Name)
			}
			want := []tools.PathAccess{{Path: tt.want}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Paths(%s) = %+v, want %+v", tt.input, got, want)
			}
		})
	}
}

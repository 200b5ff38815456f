package fs_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// TestPaths checks what each file tool tells the permission check it
// touches: the path as given, as a write for the writing tools.
func TestPaths(t *testing.T) {
	t.Parallel()
	type row struct {
		name  string
		input string
		want  []tools.PathAccess
	}
	w := func(p string) []tools.PathAccess { return []tools.PathAccess{{Path: p, Write: true}} }
	r := func(p string) []tools.PathAccess { return []tools.PathAccess{{Path: p}} }
	for _, tt := range []struct {
		tool *tools.Tool
		rows []row
	}{
		{fs.Read(), []row{
			{"absolute", `{"file_path": "/etc/passwd"}`, r("/etc/passwd")},
			{"relative", `{"file_path": "a/b.txt", "offset": 3}`, r("a/b.txt")},
		}},
		{fs.Write(fs.Options{}), []row{
			{"absolute", `{"file_path": "/work/app/a.go", "content": "x"}`, w("/work/app/a.go")},
			{"relative", `{"file_path": "a.go", "content": ""}`, w("a.go")},
			{"going_up", `{"file_path": "../other/a.go", "content": ""}`, w("../other/a.go")},
			{"home", `{"file_path": "~/.bashrc", "content": ""}`, w("~/.bashrc")},
		}},
		{fs.Edit(fs.Options{}), []row{
			{"absolute", `{"file_path": "/work/app/a.go", "old_string": "a", "new_string": "b"}`, w("/work/app/a.go")},
			{"relative_replace_all", `{"file_path": ".git/config", "old_string": "a", "new_string": "b", "replace_all": true}`, w(".git/config")},
		}},
		{fs.MultiEdit(fs.Options{}), []row{
			{"absolute", `{"file_path": "/tmp/x", "edits": [{"old_string": "a", "new_string": "b"}]}`, w("/tmp/x")},
			{"several_edits_one_file", `{"file_path": "x.txt", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]}`, w("x.txt")},
		}},
		{fs.NotebookEdit(fs.Options{}), []row{
			{"replace", `{"notebook_path": "/work/app/n.ipynb", "new_source": "x"}`, w("/work/app/n.ipynb")},
			{"delete", `{"notebook_path": "n.ipynb", "new_source": "", "cell_id": "c1", "edit_mode": "delete"}`, w("n.ipynb")},
		}},
		{fs.LS(), []row{
			{"absolute", `{"path": "/etc"}`, r("/etc")},
			{"relative_with_ignore", `{"path": "src", "ignore": ["*.log"]}`, r("src")},
			{"going_up", `{"path": ".."}`, r("..")},
		}},
	} {
		t.Run(tt.tool.Name, func(t *testing.T) {
			for _, c := range tt.rows {
				t.Run(c.name, func(t *testing.T) {
					in, err := tt.tool.Decode(json.RawMessage(c.input))
					if err != nil {
						t.Fatal(err)
					}
					got, ok := tools.Paths(in, &tools.UseContext{})
					if !ok {
						t.Fatalf("%s's input does not implement tools.PathInput", tt.tool.Name)
					}
					if !reflect.DeepEqual(got, c.want) {
						t.Errorf("Paths(%s) = %+v, want %+v", c.input, got, c.want)
					}
				})
			}
		})
	}
}

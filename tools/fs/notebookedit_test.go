package fs_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestNotebookEdit(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, nb string) *harness {
		h := newHarness(t)
		h.put("nb.ipynb", nb)
		h.read("nb.ipynb")
		return h
	}
	in := func(kv ...any) map[string]any {
		m := map[string]any{"notebook_path": "nb.ipynb", "new_source": ""}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	t.Run("replace_code_cell_clears_outputs_and_keeps_layout", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		res := h.ok("NotebookEdit", in("cell_id", "b2", "new_source", "print(2)\nprint(3)"))
		want := strings.Replace(sampleNotebook, `   "execution_count": 3,`, `   "execution_count": null,`, 1)
		want = strings.Replace(want, `   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "1\n"
     ]
    }
   ],`, `   "outputs": [],`, 1)
		want = strings.Replace(want, `    "print(1)"`, `    "print(2)\n",
    "print(3)"`, 1)
		if got := h.get("nb.ipynb"); got != want {
			t.Errorf("notebook is\n%s\nwant\n%s", got, want)
		}
		contains(t, "text", res.Text, "cell b2", "outputs and execution count were cleared")
		out := outputJSON(t, res)
		if out["cellId"] != "b2" || out["cellType"] != "code" || out["editMode"] != "replace" || out["language"] != "python" {
			t.Errorf("output %v", out)
		}
	})
	t.Run("replace_markdown_cell_keeps_rest_identical", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.ok("NotebookEdit", in("cell_id", "a1", "new_source", "# New"))
		want := strings.Replace(sampleNotebook, "    \"# Title\\n\",\n    \"Some text\"\n", "    \"# New\"\n", 1)
		if got := h.get("nb.ipynb"); got != want {
			t.Errorf("notebook is\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("replace_changes_type_code_to_markdown", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.ok("NotebookEdit", in("cell_id", "b2", "new_source", "text", "cell_type", "markdown"))
		cell := cellsOf(t, h.get("nb.ipynb"))[1]
		if cell["cell_type"] != "markdown" {
			t.Errorf("type %v", cell["cell_type"])
		}
		if _, ok := cell["outputs"]; ok {
			t.Error("markdown cell kept outputs")
		}
		if _, ok := cell["execution_count"]; ok {
			t.Error("markdown cell kept execution_count")
		}
	})
	t.Run("insert_after_cell_gets_new_id", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		res := h.ok("NotebookEdit", in("edit_mode", "insert", "cell_id", "a1", "cell_type", "code", "new_source", "x = 1\ny = 2\n"))
		cells := cellsOf(t, h.get("nb.ipynb"))
		if len(cells) != 3 {
			t.Fatalf("%d cells", len(cells))
		}
		c := cells[1]
		id, _ := c["id"].(string)
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(id) {
			t.Errorf("new id %q", id)
		}
		if c["cell_type"] != "code" || c["execution_count"] != nil || len(c["outputs"].([]any)) != 0 {
			t.Errorf("new cell %v", c)
		}
		if src := toStrings(c["source"]); strings.Join(src, "|") != "x = 1\n|y = 2\n" {
			t.Errorf("source %q", src)
		}
		contains(t, "text", res.Text, "Inserted", id, "after cell a1", "3 cells")
		if outputJSON(t, res)["cellId"] != id {
			t.Error("output cellId is not the new id")
		}
	})
	t.Run("insert_without_cell_id_goes_to_top", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		res := h.ok("NotebookEdit", in("edit_mode", "insert", "cell_type", "markdown", "new_source", "top"))
		cells := cellsOf(t, h.get("nb.ipynb"))
		if cells[0]["cell_type"] != "markdown" || toStrings(cells[0]["source"])[0] != "top" {
			t.Errorf("first cell %v", cells[0])
		}
		if _, ok := cells[0]["outputs"]; ok {
			t.Error("markdown cell has outputs")
		}
		contains(t, "text", res.Text, "at the top")
	})
	t.Run("insert_requires_cell_type", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.fail("NotebookEdit", in("edit_mode", "insert", "new_source", "x"), "cell_type", "insert")
	})
	t.Run("delete_cell", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		res := h.ok("NotebookEdit", in("edit_mode", "delete", "cell_id", "a1"))
		cells := cellsOf(t, h.get("nb.ipynb"))
		if len(cells) != 1 || cells[0]["id"] != "b2" {
			t.Errorf("cells %v", cells)
		}
		contains(t, "text", res.Text, "Deleted", "a1", "1 cell.")
	})
	t.Run("positional_id_for_notebook_without_ids", func(t *testing.T) {
		old := `{"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": "a = 1"}, {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [], "source": "b = 2"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 2}`
		h := setup(t, old)
		res := h.ok("NotebookEdit", in("cell_id", "cell-1", "new_source", "b = 3"))
		cells := cellsOf(t, h.get("nb.ipynb"))
		if cells[1]["source"] != "b = 3" {
			t.Errorf("source %v (a string source stays a string)", cells[1]["source"])
		}
		if cells[0]["execution_count"] != 1.0 {
			t.Error("other cell changed")
		}
		contains(t, "text", res.Text, "cell-1")
		if got := h.get("nb.ipynb"); strings.Contains(got, "\n") {
			t.Errorf("a compact notebook should stay compact: %s", got)
		}
		// Inserting into an id-less notebook makes no id.
		h.ok("NotebookEdit", in("edit_mode", "insert", "cell_type", "code", "new_source", "c"))
		if _, ok := cellsOf(t, h.get("nb.ipynb"))[0]["id"]; ok {
			t.Error("id added to a notebook format without ids")
		}
	})
	t.Run("unknown_cell_id_lists_ids", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.fail("NotebookEdit", in("cell_id", "zz", "new_source", "x"), `"zz"`, "a1, b2")
	})
	t.Run("replace_requires_cell_id", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.fail("NotebookEdit", in("new_source", "x"), "cell_id")
	})
	t.Run("bad_edit_mode_refused_by_schema", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.fail("NotebookEdit", in("cell_id", "a1", "edit_mode", "append"), "edit_mode")
	})
	t.Run("bad_cell_type_refused_by_schema", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.fail("NotebookEdit", in("cell_id", "a1", "cell_type", "raw"), "cell_type")
	})
	t.Run("unread_notebook_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("nb.ipynb", sampleNotebook)
		h.fail("NotebookEdit", in("cell_id", "a1", "new_source", "x"), "has not been read")
	})
	t.Run("changed_notebook_refused", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.put("nb.ipynb", strings.Replace(sampleNotebook, "Title", "Other", 1))
		h.fail("NotebookEdit", in("cell_id", "a1", "new_source", "x"), "changed on disk")
	})
	t.Run("non_notebook_path_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("NotebookEdit", map[string]any{"notebook_path": "x.py", "new_source": "", "cell_id": "a"}, "not a Jupyter notebook", "Edit")
	})
	t.Run("invalid_json_refused", func(t *testing.T) {
		h := newHarness(t)
		h.ok("Write", map[string]any{"file_path": "nb.ipynb", "content": "{not json"})
		h.fail("NotebookEdit", in("cell_id", "a1", "new_source", "x"), "not valid JSON")
		if h.get("nb.ipynb") != "{not json" {
			t.Error("file changed")
		}
	})
	t.Run("unicode_and_html_characters_kept_unescaped", func(t *testing.T) {
		nb := strings.Replace(sampleNotebook, "Some text", "naïve <b>&</b>", 1)
		h := setup(t, nb)
		h.ok("NotebookEdit", in("cell_id", "b2", "new_source", "print(1)"))
		if got := h.get("nb.ipynb"); !strings.Contains(got, `"naïve <b>&</b>"`) {
			t.Errorf("text was re-escaped:\n%s", got)
		}
	})
	t.Run("read_after_edit_shows_new_cell", func(t *testing.T) {
		h := setup(t, sampleNotebook)
		h.ok("NotebookEdit", in("cell_id", "a1", "new_source", "# Changed"))
		contains(t, "read", h.read("nb.ipynb").Text, "# Changed")
	})
}

// cellsOf parses a notebook's cells.
func cellsOf(t *testing.T, nb string) []map[string]any {
	t.Helper()
	var v struct {
		Cells []map[string]any `json:"cells"`
	}
	if err := json.Unmarshal([]byte(nb), &v); err != nil {
		t.Fatalf("notebook is not valid JSON: %v\n%s", err, nb)
	}
	return v.Cells
}

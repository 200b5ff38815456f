package fs_test

import (
	"testing"
)

func TestMultiEdit(t *testing.T) {
	t.Parallel()
	e := func(old, new string, all ...bool) map[string]any {
		m := map[string]any{"old_string": old, "new_string": new}
		if len(all) > 0 {
			m["replace_all"] = all[0]
		}
		return m
	}
	t.Run("edits_apply_in_order_to_previous_result", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.go", "var a = 1\nvar b = a\n")
		h.read("f.go")
		res := h.ok("MultiEdit", map[string]any{"file_path": "f.go", "edits": []any{
			e("var a = 1", "var alpha = 1"),
			e("= a\n", "= alpha\n"),
			e("alpha", "ALPHA", true),
		}})
		if got := h.get("f.go"); got != "var ALPHA = 1\nvar b = ALPHA\n" {
			t.Errorf("file holds %q", got)
		}
		out := outputJSON(t, res)
		if r := out["replacements"].([]any); len(r) != 3 || r[2] != 2.0 {
			t.Errorf("replacements %v", out["replacements"])
		}
		contains(t, "text", res.Text, "4 replacements")
	})
	t.Run("failing_edit_leaves_file_untouched_and_names_index", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "one two three")
		h.read("f.txt")
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{
			e("one", "1"), e("four", "4"), e("three", "3"),
		}}, "edits[1]", "edit 2 of 3", "not found")
		if h.get("f.txt") != "one two three" {
			t.Errorf("file changed to %q", h.get("f.txt"))
		}
	})
	t.Run("ambiguous_edit_names_index_and_count", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "x x")
		h.read("f.txt")
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{e("x", "y")}}, "edits[0]", "2 times")
	})
	t.Run("earlier_edit_can_make_later_one_fail", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "abc")
		h.read("f.txt")
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{e("abc", "xyz"), e("abc", "q")}}, "edits[1]")
		if h.get("f.txt") != "abc" {
			t.Error("file changed")
		}
	})
	t.Run("identical_strings_name_index", func(t *testing.T) {
		h := newHarness(t)
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{e("a", "b"), e("c", "d"), e("same", "same")}}, "edits[2]", "identical")
	})
	t.Run("empty_edits_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{}}, "edits")
	})
	t.Run("unknown_key_in_edit_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{map[string]any{"old_string": "a", "new_string": "b", "extra": 1}}}, "extra")
	})
	t.Run("first_empty_old_creates_then_later_edits_apply", func(t *testing.T) {
		h := newHarness(t)
		res := h.ok("MultiEdit", map[string]any{"file_path": "new.txt", "edits": []any{e("", "hello world\n"), e("world", "there")}})
		if h.get("new.txt") != "hello there\n" {
			t.Errorf("file holds %q", h.get("new.txt"))
		}
		contains(t, "text", res.Text, "Created")
	})
	t.Run("later_empty_old_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "abc")
		h.read("f.txt")
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{e("a", "b"), e("", "c")}}, "edits[1]", "empty")
	})
	t.Run("unread_file_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "abc")
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{e("a", "b")}}, "has not been read")
	})
	t.Run("ipynb_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("MultiEdit", map[string]any{"file_path": "x.ipynb", "edits": []any{e("a", "b")}}, "NotebookEdit")
	})
	t.Run("crlf_kept_across_edits", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a\r\nb\r\n")
		h.read("f.txt")
		h.ok("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{e("a\n", "a\nA\n"), e("b", "B")}})
		if got := h.get("f.txt"); got != "a\r\nA\r\nB\r\n" {
			t.Errorf("file holds %q", got)
		}
	})
	t.Run("changed_file_applies_when_each_edit_unique", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a b")
		h.read("f.txt")
		h.put("f.txt", "a b c")
		res := h.ok("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{e("a", "1"), e("b", "2")}})
		contains(t, "text", res.Text, "not seen")
		if h.get("f.txt") != "1 2 c" {
			t.Errorf("file holds %q", h.get("f.txt"))
		}
	})
}

package fs_test

import (
	"strings"
	"testing"
)

// An Edit whose old_string is not in the file says where the file nearly
// holds it, with a diff and what differs, and changes nothing.
func TestEditNearMiss(t *testing.T) {
	t.Parallel()
	const goFile = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"world\"\n\tfmt.Println(\"hello\", name)\n\tif name != \"\" {\n\t\treturn\n\t}\n}\n\nfunc other() int {\n\treturn 42\n}\n"
	cases := []struct {
		name, file, old string
		want            []string
	}{
		{"spaces_for_tabs", goFile, "    name := \"world\"\n    fmt.Println(\"hello\", name)",
			[]string{"lines 6-7 of the file", "100% similar", "-    name := \"world\"", "+\tname := \"world\"",
				"line 6: indentation: the file has 1 tab, old_string 4 spaces", "line 7: indentation: the file has 1 tab, old_string 4 spaces"}},
		{"tabs_for_spaces", "def f():\n    x = 1\n    return x\n", "def f():\n\tx = 1\n\treturn x",
			[]string{"lines 1-3", "line 2: indentation: the file has 4 spaces, old_string 1 tab", "line 3: indentation"}},
		{"trailing_whitespace", "a = 1  \nb = 2\n", "a = 1\nb = 2",
			[]string{"lines 1-2", "line 1: trailing whitespace: the file has 2 spaces, old_string none"}},
		{"spacing_within_line", goFile, "\tname  :=  \"world\"",
			[]string{"line 6 of the file", "spacing within the line differs"}},
		{"single_for_double_quotes", goFile, "\tfmt.Println('hello', name)",
			[]string{"line 7 of the file", "100% similar", "+\tfmt.Println(\"hello\", name)", `line 7: quotes: the file has "\"" where old_string has "'"`}},
		{"one_word_changed", goFile, "func other() int {\n\treturn 43\n}",
			[]string{"lines 13-15", "-\treturn 43", "+\treturn 42", `line 14: the file has "42" where old_string has "43"`}},
		{"renamed_identifier", goFile, "\tfmt.Println(\"hello\", nam)\n\tif nam != \"\" {",
			[]string{"lines 7-8", `line 7: the file has "name" where old_string has "nam"`, `line 8: the file has "name" where old_string has "nam"`}},
		{"fragment_of_a_line_with_a_changed_word", goFile, "fmt.Println(\"goodbye\", name)",
			[]string{"line 7 of the file", `line 7: the file has "hello" where old_string has "goodbye"`}},
		{"missing_line", goFile, "func main() {\n\tfmt.Println(\"hello\", name)\n\tif name != \"\" {",
			[]string{"lines 5-8 of the file", "+\tname := \"world\"", `line 6: the file has this line, which old_string lacks: "name := \"world\""`}},
		{"mixed_line_endings", "one\r\ntwo\nthree\r\nfour\n", "one\ntwo\nthree\nfour",
			[]string{"lines 1-4", "line endings: the file ends lines 1, 3 with CRLF"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.put("f.txt", c.file)
			h.read("f.txt")
			msg := h.fail("Edit", map[string]any{"file_path": "f.txt", "old_string": c.old, "new_string": "X"}, append([]string{"was not found", "What differs"}, c.want...)...)
			if h.get("f.txt") != c.file {
				t.Error("the file was changed")
			}
			if n := strings.Count(msg, "\n"); n > 40 {
				t.Errorf("%d lines of error, want a short one:\n%s", n, msg)
			}
		})
	}
	t.Run("nothing_alike_shows_no_region", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.put("f.txt", goFile)
		h.read("f.txt")
		msg := h.fail("Edit", map[string]any{"file_path": "f.txt", "old_string": "SELECT * FROM users WHERE id = 7", "new_string": "X"}, "was not found", "Read the file again")
		if strings.Contains(msg, "closest") {
			t.Errorf("a region shown for text the file does not resemble:\n%s", msg)
		}
	})
	t.Run("multiedit_names_the_edit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.put("f.txt", goFile)
		h.read("f.txt")
		h.fail("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []any{
			map[string]any{"old_string": "return 42", "new_string": "return 1"},
			map[string]any{"old_string": "    return 1", "new_string": "return 2"},
		}}, "edits[1]", "line 14 of the file", "line 14: indentation: the file has 1 tab, old_string 4 spaces")
		if h.get("f.txt") != goFile {
			t.Error("the file was changed")
		}
	})
}

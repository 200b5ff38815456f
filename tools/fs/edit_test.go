package fs_test

import (
	"os"
	"strings"
	"testing"
)

func TestEdit(t *testing.T) {
	t.Parallel()
	edit := func(h *harness, old, new string, extra ...any) map[string]any {
		in := map[string]any{"file_path": "f.txt", "old_string": old, "new_string": new}
		for i := 0; i+1 < len(extra); i += 2 {
			in[extra[i].(string)] = extra[i+1]
		}
		return in
	}
	applies := []struct {
		name, before, old, new string
		replaceAll             bool
		after                  string
	}{
		{"unique_match_replaced", "alpha beta gamma", "beta", "BETA", false, "alpha BETA gamma"},
		{"replace_all_replaces_every_occurrence", "x = 1; x = 2; x = 3", "x", "y", true, "y = 1; y = 2; y = 3"},
		{"multiline_old_string", "func a() {\n\treturn 1\n}\n", "\treturn 1\n}", "\treturn 2\n}", false, "func a() {\n\treturn 2\n}\n"},
		{"crlf_file_stays_crlf", "one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "one\n2\nextra\n", false, "one\r\n2\r\nextra\r\nthree\r\n"},
		{"crlf_file_single_line_new_with_newline", "a\r\nb\r\n", "a", "a\nz", false, "a\r\nz\r\nb\r\n"},
		{"mixed_endings_match_as_given", "a\r\nb\nc\r\n", "b\nc", "B\nC", false, "a\r\nB\nC\r\n"},
		{"bom_kept", "\ufeffhello world", "world", "there", false, "\ufeffhello there"},
		{"utf16le_kept", utf16File("hello world", false), "world", "wörld", false, utf16File("hello wörld", false)},
		{"curly_in_file_straight_in_old_keeps_curly", "say “hi” and ‘bye’ now", `"hi" and 'bye'`, `"hello" and 'ciao'`, false, "say “hello” and ‘ciao’ now"},
		{"curly_file_apostrophe_stays_curly", "it’s “fine”", `it's "fine"`, `it's "great" isn't it`, false, "it’s “great” isn’t it"},
		{"straight_in_file_curly_in_old_keeps_straight", `x = "a"`, "x = “a”", "x = “b”", false, `x = "b"`},
		{"replace_all_with_quote_tolerance", "“a” “a”", `"a"`, `"b"`, true, "“b” “b”"},
		{"exact_match_preferred_over_quote_tolerant", "'a' ‘a’", "'a'", "'b'", false, "'b' ‘a’"},
		{"non_ascii_text", "naïve café", "café", "thé", false, "naïve thé"},
	}
	for _, c := range applies {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.put("f.txt", c.before)
			h.read("f.txt")
			res := h.ok("Edit", edit(h, c.old, c.new, "replace_all", c.replaceAll))
			if got := h.get("f.txt"); got != c.after {
				t.Errorf("file holds %q, want %q", got, c.after)
			}
			contains(t, "text", res.Text, "Edited "+h.path("f.txt"))
		})
	}

	t.Run("output_object", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a\nb\nc\n")
		h.read("f.txt")
		res := h.ok("Edit", edit(h, "b", "B"))
		out := outputJSON(t, res)
		if out["filePath"] != h.path("f.txt") || out["oldString"] != nil || out["newString"] != nil || out["replaceAll"] != false || out["replacements"] != 1.0 {
			t.Errorf("output %v", out)
		}
		if _, ok := out["structuredPatch"]; !ok {
			t.Error("no structuredPatch")
		}
		contains(t, "text", res.Text, "1 replacement", "1\ta\n2\tB\n3\tc")
	})
	t.Run("replace_all_reports_count", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a a a")
		h.read("f.txt")
		res := h.ok("Edit", edit(h, "a", "b", "replace_all", true))
		contains(t, "text", res.Text, "3 replacements")
	})
	errs := []struct {
		name, before, old, new string
		want                   []string
	}{
		{"no_match", "alpha", "beta", "x", []string{"not found", "exactly"}},
		{"two_matches_without_replace_all", "ab ab", "ab", "x", []string{"occurs 2 times", "replace_all", "surrounding"}},
		{"two_quote_tolerant_matches_counted", "“a” and “a”", `"a"`, "x", []string{"occurs 2 times"}},
		{"empty_old_on_nonempty_file", "content", "", "x", []string{"already exists", "not empty"}},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.put("f.txt", c.before)
			h.read("f.txt")
			h.fail("Edit", edit(h, c.old, c.new), c.want...)
			if h.get("f.txt") != c.before {
				t.Error("file was changed")
			}
		})
	}
	t.Run("identical_strings_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("Edit", edit(h, "a", "a"), "identical")
	})
	t.Run("ipynb_refused_pointing_to_NotebookEdit", func(t *testing.T) {
		h := newHarness(t)
		h.fail("Edit", map[string]any{"file_path": "n.ipynb", "old_string": "a", "new_string": "b"}, "NotebookEdit")
	})
	t.Run("empty_old_creates_missing_file", func(t *testing.T) {
		h := newHarness(t)
		res := h.ok("Edit", map[string]any{"file_path": "dir/new.txt", "old_string": "", "new_string": "hello\n"})
		if h.get("dir/new.txt") != "hello\n" {
			t.Error("not created")
		}
		contains(t, "text", res.Text, "Created")
		if outputJSON(t, res)["created"] != true {
			t.Error("created not set")
		}
	})
	t.Run("empty_old_fills_empty_file_after_read", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "")
		h.read("f.txt")
		h.ok("Edit", edit(h, "", "now"))
		if h.get("f.txt") != "now" {
			t.Error("not filled")
		}
	})
	t.Run("missing_file_names_cwd", func(t *testing.T) {
		h := newHarness(t)
		h.fail("Edit", edit(h, "a", "b"), "does not exist", h.dir, "empty old_string")
	})
	t.Run("unread_file_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "abc")
		h.fail("Edit", edit(h, "b", "x"), "has not been read", "Read it first")
	})
	t.Run("touched_but_unchanged_applies_without_note", func(t *testing.T) {
		h := newHarness(t)
		p := h.put("f.txt", "abc")
		h.read("f.txt")
		touch(t, p)
		res := h.ok("Edit", edit(h, "b", "x"))
		if strings.Contains(res.Text, "not seen") {
			t.Errorf("unexpected unseen-changes note: %s", res.Text)
		}
	})
	t.Run("changed_file_still_unique_applies_with_note", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "one\ntwo\n")
		h.read("f.txt")
		h.put("f.txt", "zero\none\ntwo\n")
		res := h.ok("Edit", edit(h, "two", "2"))
		if h.get("f.txt") != "zero\none\n2\n" {
			t.Errorf("file holds %q", h.get("f.txt"))
		}
		contains(t, "text", res.Text, "changed on disk", "not seen")
		if outputJSON(t, res)["unseenChanges"] != true {
			t.Error("unseenChanges not set")
		}
		// The session's view is now the written content: a second edit
		// carries no note.
		if res := h.ok("Edit", edit(h, "zero", "0")); strings.Contains(res.Text, "not seen") {
			t.Errorf("note repeated: %s", res.Text)
		}
	})
	t.Run("changed_file_no_longer_matching_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "one two")
		h.read("f.txt")
		h.put("f.txt", "one three")
		h.fail("Edit", edit(h, "two", "2"), "changed on disk", "Read it again")
	})
	t.Run("changed_file_now_ambiguous_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "two")
		h.read("f.txt")
		h.put("f.txt", "two two")
		h.fail("Edit", edit(h, "two", "2", "replace_all", true), "changed on disk", "2 times")
		if h.get("f.txt") != "two two" {
			t.Error("file was changed")
		}
	})
	t.Run("changed_file_needs_exact_quotes", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "“a”")
		h.read("f.txt")
		h.put("f.txt", "“a” b")
		h.fail("Edit", edit(h, `"a"`, "x"), "changed on disk")
	})
	t.Run("keeps_mode", func(t *testing.T) {
		h := newHarness(t)
		p := h.put("f.txt", "abc")
		os.Chmod(p, 0o751)
		h.read("f.txt")
		h.ok("Edit", edit(h, "b", "x"))
		if info, _ := os.Stat(p); info.Mode().Perm() != 0o751 {
			t.Errorf("mode %v", info.Mode().Perm())
		}
	})
	t.Run("binary_file_refused", func(t *testing.T) {
		h := newHarness(t)
		h.ok("Write", map[string]any{"file_path": "f.txt", "content": "a\x00b"})
		h.fail("Edit", edit(h, "a", "c"), "binary")
	})
	t.Run("after_partial_read_of_large_file", func(t *testing.T) {
		h := newHarness(t)
		body := strings.Repeat("filler line\n", (9<<20)/12) + "needle\n"
		h.put("f.txt", body)
		h.ok("Read", map[string]any{"file_path": "f.txt", "offset": 1, "limit": 5})
		res := h.ok("Edit", edit(h, "needle", "pin"))
		if strings.Contains(res.Text, "not seen") {
			t.Errorf("unexpected note: %s", res.Text)
		}
		if got := h.get("f.txt"); !strings.HasSuffix(got, "filler line\npin\n") || len(got) != len(body)-3 {
			t.Errorf("file ends %q", got[len(got)-20:])
		}
	})
}

// touch moves a file's modification time an hour ahead.
func touch(t *testing.T, p string) {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	later := info.ModTime().Add(3600e9)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

package fs_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestLS(t *testing.T) {
	t.Parallel()
	tree := func(h *harness) {
		for _, f := range []string{"b.txt", "a/x.go", "a/deep/y.go", "c/z.log", ".git/HEAD", ".env", "node_modules/m/index.js"} {
			h.put(f, "x")
		}
	}
	t.Run("indented_tree_dirs_marked", func(t *testing.T) {
		h := newHarness(t)
		tree(h)
		res := h.ok("LS", map[string]any{"path": h.dir})
		want := "- " + h.dir + "/\n" +
			"  - .env\n" +
			"  - a/\n" +
			"    - deep/\n" +
			"      - y.go\n" +
			"    - x.go\n" +
			"  - b.txt\n" +
			"  - c/\n" +
			"    - z.log\n" +
			"  - node_modules/\n" +
			"    - m/\n" +
			"      - index.js"
		if res.Text != want {
			t.Errorf("got\n%s\nwant\n%s", res.Text, want)
		}
		out := outputJSON(t, res)
		if got := fmt.Sprint(out["entries"]); got != "[.env a/ b.txt c/ node_modules/ a/deep/ a/x.go c/z.log node_modules/m/ a/deep/y.go node_modules/m/index.js]" {
			t.Errorf("entries %s", got)
		}
	})
	ignores := []struct {
		name   string
		ignore []string
		gone   []string
		kept   []string
	}{
		{"ignore_by_name", []string{"node_modules"}, []string{"node_modules", "index.js"}, []string{"a/", "b.txt"}},
		{"ignore_by_glob_on_name", []string{"*.go"}, []string{"x.go", "y.go"}, []string{"deep/", "z.log"}},
		{"ignore_by_relative_path", []string{"a/deep"}, []string{"deep/", "y.go"}, []string{"x.go"}},
		{"ignore_doublestar", []string{"**/*.log"}, []string{"z.log"}, []string{"c/"}},
		{"ignore_dir_only_pattern", []string{"c/", "b.txt/"}, []string{"c/", "z.log"}, []string{"b.txt"}},
		{"ignore_brace_alternatives", []string{"{a,c}"}, []string{"a/", "c/", "x.go"}, []string{"b.txt"}},
	}
	for _, c := range ignores {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			tree(h)
			text := h.ok("LS", map[string]any{"path": ".", "ignore": c.ignore}).Text
			for _, g := range c.gone {
				if strings.Contains(text, "- "+g) {
					t.Errorf("%q listed despite ignore %v:\n%s", g, c.ignore, text)
				}
			}
			contains(t, "listing", text, c.kept...)
		})
	}
	t.Run("git_dir_skipped", func(t *testing.T) {
		h := newHarness(t)
		tree(h)
		if text := h.ok("LS", map[string]any{"path": "."}).Text; strings.Contains(text, ".git") {
			t.Errorf(".git listed:\n%s", text)
		}
	})
	t.Run("capped_at_1000_with_note", func(t *testing.T) {
		h := newHarness(t)
		for i := range 1005 {
			h.put(fmt.Sprintf("f%04d", i), "")
		}
		res := h.ok("LS", map[string]any{"path": "."})
		if n := strings.Count(res.Text, "\n  - "); n != 1000 {
			t.Errorf("%d entries listed, want 1000", n)
		}
		contains(t, "listing", res.Text, "more than 1000 entries")
		if outputJSON(t, res)["truncated"] != true {
			t.Error("truncated not set")
		}
	})
	t.Run("cap_is_breadth_first", func(t *testing.T) {
		h := newHarness(t)
		for i := range 1000 {
			h.put(fmt.Sprintf("deep/f%04d", i), "")
		}
		h.put("top.txt", "")
		text := h.ok("LS", map[string]any{"path": "."}).Text
		contains(t, "listing", text, "- top.txt", "- deep/")
	})
	t.Run("empty_directory", func(t *testing.T) {
		h := newHarness(t)
		if got := h.ok("LS", map[string]any{"path": "."}).Text; got != "- "+h.dir+"/" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("file_path_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "")
		h.fail("LS", map[string]any{"path": "f.txt"}, "not a directory", "Read")
	})
	t.Run("missing_directory_refused_with_suggestion", func(t *testing.T) {
		h := newHarness(t)
		os.Mkdir(h.path("source"), 0o755)
		h.fail("LS", map[string]any{"path": "sourc"}, "does not exist", "Did you mean "+h.path("source"))
	})
	t.Run("invalid_glob_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("LS", map[string]any{"path": ".", "ignore": []string{"ok", "[bad"}}, "ignore[1]", "[bad")
	})
	t.Run("missing_path_refused_by_schema", func(t *testing.T) {
		h := newHarness(t)
		h.fail("LS", map[string]any{}, "path")
	})
}

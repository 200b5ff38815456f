package fs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	t.Run("creates_file_and_parents", func(t *testing.T) {
		h := newHarness(t)
		res := h.ok("Write", map[string]any{"file_path": "a/b/new.txt", "content": "one\ntwo\n"})
		if got := h.get("a/b/new.txt"); got != "one\ntwo\n" {
			t.Errorf("file holds %q", got)
		}
		contains(t, "text", res.Text, "Created", h.path("a/b/new.txt"), "2 lines", "current")
		out := outputJSON(t, res)
		if out["type"] != "create" || out["filePath"] != h.path("a/b/new.txt") || out["content"] != nil || out["lines"] != 2.0 {
			t.Errorf("output %v", out)
		}
	})
	t.Run("new_file_gets_umask_mode", func(t *testing.T) {
		h := newHarness(t)
		h.ok("Write", map[string]any{"file_path": "n.txt", "content": "x"})
		info, _ := os.Stat(h.path("n.txt"))
		if info.Mode().Perm()&0o600 != 0o600 || info.Mode().Perm()&0o111 != 0 {
			t.Errorf("mode %v, want rw for the owner and no execute bits", info.Mode())
		}
	})
	t.Run("overwrite_unread_file_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "precious")
		h.fail("Write", map[string]any{"file_path": "f.txt", "content": "x"}, "has not been read", "Read it first")
		if h.get("f.txt") != "precious" {
			t.Error("file was changed")
		}
	})
	t.Run("overwrite_after_read_updates", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a\nb\nc\n")
		h.read("f.txt")
		res := h.ok("Write", map[string]any{"file_path": "f.txt", "content": "a\nB\nc\n"})
		if h.get("f.txt") != "a\nB\nc\n" {
			t.Errorf("file holds %q", h.get("f.txt"))
		}
		contains(t, "text", res.Text, "Updated", "current")
		out := outputJSON(t, res)
		if out["type"] != "update" {
			t.Errorf("type %v", out["type"])
		}
		patch, _ := out["structuredPatch"].([]any)
		if len(patch) != 1 {
			t.Fatalf("structuredPatch %v", out["structuredPatch"])
		}
		hunk := patch[0].(map[string]any)
		if hunk["oldStart"] != 1.0 || hunk["oldLines"] != 3.0 || hunk["newLines"] != 3.0 {
			t.Errorf("hunk %v", hunk)
		}
		if got := strings.Join(toStrings(hunk["lines"]), "|"); got != " a|-b|+B| c" {
			t.Errorf("hunk lines %q", got)
		}
	})
	t.Run("overwrite_after_change_on_disk_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "v1")
		h.read("f.txt")
		h.put("f.txt", "v2 by someone else")
		h.fail("Write", map[string]any{"file_path": "f.txt", "content": "mine"}, "changed on disk", "Read it again")
		if h.get("f.txt") != "v2 by someone else" {
			t.Error("file was changed")
		}
	})
	t.Run("touched_but_unchanged_file_is_not_stale", func(t *testing.T) {
		h := newHarness(t)
		p := h.put("f.txt", "same")
		h.read("f.txt")
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
		h.ok("Write", map[string]any{"file_path": "f.txt", "content": "new"})
	})
	t.Run("second_write_without_read_allowed", func(t *testing.T) {
		h := newHarness(t)
		h.ok("Write", map[string]any{"file_path": "w.txt", "content": "1"})
		h.ok("Write", map[string]any{"file_path": "w.txt", "content": "2"})
		if h.get("w.txt") != "2" {
			t.Error("second write lost")
		}
	})
	for _, mode := range []os.FileMode{0o755, 0o600, 0o640} {
		t.Run("keeps_mode_"+mode.String(), func(t *testing.T) {
			h := newHarness(t)
			p := h.put("m.sh", "#!/bin/sh\n")
			os.Chmod(p, mode)
			h.read("m.sh")
			h.ok("Write", map[string]any{"file_path": p, "content": "#!/bin/sh\necho hi\n"})
			info, _ := os.Stat(p)
			if info.Mode().Perm() != mode {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), mode)
			}
		})
	}
	formats := []struct {
		name, before, content, after string
	}{
		{"keeps_crlf", "a\r\nb\r\n", "x\ny\n", "x\r\ny\r\n"},
		{"crlf_content_into_crlf_file_not_doubled", "a\r\n", "x\r\ny\n", "x\r\ny\r\n"},
		{"lf_file_written_as_given", "a\nb\n", "x\ny\n", "x\ny\n"},
		{"keeps_utf8_bom", "\ufeffa\n", "b\n", "\ufeffb\n"},
		{"bom_in_content_not_doubled", "\ufeffa\n", "\ufeffb\n", "\ufeffb\n"},
		{"keeps_utf16le", utf16File("a\r\n", false), "é\n", utf16File("é\r\n", false)},
		{"keeps_utf16be", utf16File("a", true), "b", utf16File("b", true)},
	}
	for _, c := range formats {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.put("f.txt", c.before)
			h.read("f.txt")
			h.ok("Write", map[string]any{"file_path": "f.txt", "content": c.content})
			if got := h.get("f.txt"); got != c.after {
				t.Errorf("file holds %q, want %q", got, c.after)
			}
		})
	}
	t.Run("symlink_inside_workdir_writes_target", func(t *testing.T) {
		h := newHarness(t)
		h.put("real.txt", "old")
		os.Symlink("real.txt", h.path("link.txt"))
		h.read("link.txt")
		h.ok("Write", map[string]any{"file_path": "link.txt", "content": "new"})
		if h.get("real.txt") != "new" {
			t.Errorf("target holds %q", h.get("real.txt"))
		}
		if info, _ := os.Lstat(h.path("link.txt")); info.Mode()&os.ModeSymlink == 0 {
			t.Error("the link was replaced by a file")
		}
	})
	t.Run("symlink_outside_workdirs_refused", func(t *testing.T) {
		h := newHarness(t)
		outside := filepath.Join(t.TempDir(), "outside.txt")
		os.WriteFile(outside, []byte("theirs"), 0o644)
		os.Symlink(outside, h.path("link.txt"))
		h.fail("Write", map[string]any{"file_path": "link.txt", "content": "x"}, "symbolic link", "outside the working directories")
		if b, _ := os.ReadFile(outside); string(b) != "theirs" {
			t.Error("the outside file was changed")
		}
	})
	t.Run("symlink_to_sibling_with_common_prefix_refused", func(t *testing.T) {
		h := newHarness(t)
		sibling := h.dir + "2"
		os.Mkdir(sibling, 0o755)
		t.Cleanup(func() { os.RemoveAll(sibling) })
		os.Symlink(filepath.Join(sibling, "f"), h.path("link"))
		h.fail("Write", map[string]any{"file_path": "link", "content": "x"}, "outside")
	})
	t.Run("dangling_symlink_inside_creates_target", func(t *testing.T) {
		h := newHarness(t)
		os.Mkdir(h.path("d"), 0o755)
		os.Symlink("d/target.txt", h.path("link.txt"))
		h.ok("Write", map[string]any{"file_path": "link.txt", "content": "made"})
		if h.get("d/target.txt") != "made" {
			t.Error("target not created")
		}
	})
	t.Run("directory_refused", func(t *testing.T) {
		h := newHarness(t)
		os.Mkdir(h.path("d"), 0o755)
		h.fail("Write", map[string]any{"file_path": "d", "content": "x"}, "is a directory")
	})
	t.Run("no_temporary_files_left", func(t *testing.T) {
		h := newHarness(t)
		for range 3 {
			h.ok("Write", map[string]any{"file_path": "t.txt", "content": "x"})
		}
		entries, _ := os.ReadDir(h.dir)
		if len(entries) != 1 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("directory holds %v, want only t.txt", names)
		}
	})
	t.Run("empty_path_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("Write", map[string]any{"file_path": " ", "content": "x"}, "file_path")
	})
	t.Run("missing_content_refused_by_schema", func(t *testing.T) {
		h := newHarness(t)
		h.fail("Write", map[string]any{"file_path": "x"}, "content")
	})
	t.Run("output_never_echoes_the_content", func(t *testing.T) {
		h := newHarness(t)
		for _, content := range []string{strings.Repeat("z", 60000), strings.Repeat("y", 60000)} {
			res := h.ok("Write", map[string]any{"file_path": "big.txt", "content": content})
			b, _ := json.Marshal(res.Output)
			if len(b) > 1000 || strings.Contains(string(b), "zzzz") || strings.Contains(string(b), "yyyy") {
				t.Errorf("output of %d bytes echoes the content: %.200s", len(b), b)
			}
			if len(res.Text) > 300 {
				t.Errorf("text of %d bytes: %.200s", len(res.Text), res.Text)
			}
			if h.get("big.txt") != content {
				t.Error("file not written in full")
			}
			h.ok("Read", map[string]any{"file_path": "big.txt", "limit": 1})
		}
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

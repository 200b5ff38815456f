package fs_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// snapshot lists every file under dir with its content ("/" marks a
// directory, "->" a link), to show a refused write changed nothing there.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			m[rel] = "-> " + l
		case info.IsDir():
			m[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range after {
		if before[k] != v {
			t.Errorf("%s: %s now holds %q, was %q", what, k, v, before[k])
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s: %s is gone", what, k)
		}
	}
}

// outsideDir makes a directory outside the harness's working directory
// holding d/f.txt = "theirs" and f.txt = "theirs".
func outsideDir(t *testing.T) string {
	t.Helper()
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"f.txt", "d/f.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(out, p)), 0o755)
		if err := os.WriteFile(filepath.Join(out, p), []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// writeCalls are the writing tools' calls changing d/f.txt ("old text")
// into "new text".
var writeCalls = []struct {
	tool  string
	input func(path string) map[string]any
}{
	{"Write", func(p string) map[string]any { return map[string]any{"file_path": p, "content": "new text"} }},
	{"Edit", func(p string) map[string]any {
		return map[string]any{"file_path": p, "old_string": "old", "new_string": "new"}
	}},
	{"MultiEdit", func(p string) map[string]any {
		return map[string]any{"file_path": p, "edits": []map[string]any{{"old_string": "old", "new_string": "new"}}}
	}},
}

// TestWriteConfinement checks that a write cannot be led out of the
// working directories by symbolic links, including one swapped in after
// the path was checked, right before the write.
func TestWriteConfinement(t *testing.T) {
	for _, c := range writeCalls {
		t.Run(c.tool+"/directory_swapped_for_link_out_before_write", func(t *testing.T) {
			h := newHarness(t)
			out := outsideDir(t)
			h.put("d/f.txt", "old text")
			h.read("d/f.txt")
			before := snapshot(t, out)
			swapped := false
			defer fs.SetBeforeCommit(func(string) {
				if err := os.Rename(h.path("d"), h.path("d.moved")); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(filepath.Join(out, "d"), h.path("d")); err != nil {
					t.Error(err)
				}
				swapped = true
			})()
			h.fail(c.tool, c.input("d/f.txt"), "symbolic link", "outside", "nothing was written")
			if !swapped {
				t.Fatal("the hook did not run")
			}
			sameSnapshot(t, "outside", before, snapshot(t, out))
			if got := h.get("d.moved/f.txt"); got != "old text" {
				t.Errorf("the original file holds %q", got)
			}
		})
		t.Run(c.tool+"/file_swapped_for_link_out_before_write", func(t *testing.T) {
			h := newHarness(t)
			out := outsideDir(t)
			h.put("f.txt", "old text")
			h.read("f.txt")
			before := snapshot(t, out)
			defer fs.SetBeforeCommit(func(string) {
				os.Remove(h.path("f.txt"))
				if err := os.Symlink(filepath.Join(out, "f.txt"), h.path("f.txt")); err != nil {
					t.Error(err)
				}
			})()
			// The rename replaces the link itself: whatever the call
			// answers, nothing outside may change.
			h.call(c.tool, c.input("f.txt"))
			sameSnapshot(t, "outside", before, snapshot(t, out))
		})
		t.Run(c.tool+"/directory_link_out_refused", func(t *testing.T) {
			h := newHarness(t)
			out := outsideDir(t)
			os.Symlink(filepath.Join(out, "d"), h.path("d"))
			before := snapshot(t, out)
			h.ok("Read", map[string]any{"file_path": "d/f.txt"}) // reading is the permission check's affair
			h.fail(c.tool, c.input("d/f.txt"), "symbolic link", "outside the working directories", filepath.Join(out, "d", "f.txt"))
			sameSnapshot(t, "outside", before, snapshot(t, out))
		})
	}
	t.Run("new_directory_swapped_for_link_out_before_write", func(t *testing.T) {
		h := newHarness(t)
		out := outsideDir(t)
		before := snapshot(t, out)
		defer fs.SetBeforeCommit(func(string) {
			if err := os.Symlink(out, h.path("new")); err != nil {
				t.Error(err)
			}
		})()
		h.fail("Write", map[string]any{"file_path": "new/sub/n.txt", "content": "x"}, "outside", "nothing was written")
		sameSnapshot(t, "outside", before, snapshot(t, out))
	})
	t.Run("dangling_link_to_outside_refused", func(t *testing.T) {
		h := newHarness(t)
		out := outsideDir(t)
		os.Symlink(filepath.Join(out, "missing.txt"), h.path("link.txt"))
		os.Symlink(filepath.Join(out, "nodir"), h.path("dirlink"))
		before := snapshot(t, out)
		h.fail("Write", map[string]any{"file_path": "link.txt", "content": "x"}, "outside")
		h.fail("Write", map[string]any{"file_path": "dirlink/f.txt", "content": "x"}, "outside")
		sameSnapshot(t, "outside", before, snapshot(t, out))
	})
	t.Run("sibling_with_common_prefix_through_directory_link_refused", func(t *testing.T) {
		h := newHarness(t)
		sibling := h.dir + "-evil"
		os.Mkdir(sibling, 0o755)
		t.Cleanup(func() { os.RemoveAll(sibling) })
		os.Symlink(sibling, h.path("d"))
		h.fail("Write", map[string]any{"file_path": "d/x", "content": "x"}, "outside")
		if entries, _ := os.ReadDir(sibling); len(entries) != 0 {
			t.Errorf("%s holds %d entries", sibling, len(entries))
		}
	})
	t.Run("directory_link_inside_followed", func(t *testing.T) {
		h := newHarness(t)
		h.put("real/f.txt", "old text")
		os.Symlink("real", h.path("d"))
		h.read("d/f.txt")
		h.ok("Write", map[string]any{"file_path": "d/f.txt", "content": "new text"})
		if got := h.get("real/f.txt"); got != "new text" {
			t.Errorf("real/f.txt holds %q", got)
		}
	})
	t.Run("link_into_another_working_directory_followed", func(t *testing.T) {
		h := newHarness(t)
		other, _ := filepath.EvalSymlinks(t.TempDir())
		s, err := tools.NewSession(tools.SessionOptions{Cwd: h.dir, WorkDirs: []string{other}, StateRoot: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		h.s = s
		os.Symlink(other, h.path("o"))
		h.ok("Write", map[string]any{"file_path": "o/sub/f.txt", "content": "made"})
		if b, _ := os.ReadFile(filepath.Join(other, "sub", "f.txt")); string(b) != "made" {
			t.Errorf("other working directory's file holds %q", b)
		}
	})
	t.Run("path_outside_as_written_written_when_let_through", func(t *testing.T) {
		// Without a permitter every call is let through; a path outside
		// the working directories is then written where it leads.
		h := newHarness(t)
		out := outsideDir(t)
		h.ok("Write", map[string]any{"file_path": filepath.Join(out, "a", "b", "new.txt"), "content": "made"})
		if b, _ := os.ReadFile(filepath.Join(out, "a", "b", "new.txt")); string(b) != "made" {
			t.Errorf("got %q", b)
		}
		entries, _ := os.ReadDir(filepath.Join(out, "a", "b"))
		if names := len(entries); names != 1 {
			t.Errorf("%d entries beside the new file, want none (no temporary file left)", names-1)
		}
	})
	t.Run("mode_kept_through_the_root", func(t *testing.T) {
		h := newHarness(t)
		h.put("x.sh", "old text")
		os.Chmod(h.path("x.sh"), 0o751)
		h.read("x.sh")
		h.ok("Write", map[string]any{"file_path": "x.sh", "content": "new text"})
		info, _ := os.Stat(h.path("x.sh"))
		if info.Mode().Perm() != 0o751 {
			t.Errorf("mode %v, want 0751", info.Mode().Perm())
		}
		names, _ := os.ReadDir(h.dir)
		if !slices.ContainsFunc(names, func(e os.DirEntry) bool { return e.Name() == "x.sh" }) || len(names) != 1 {
			t.Errorf("directory holds %d entries", len(names))
		}
	})
}

//go:build !windows

package search

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/tools"
)

// outsideSecret is what the files outside the working directory hold;
// no search led out by a swapped link may return it.
const outsideSecret = "needle OUTSIDE-SECRET"

// confineTree makes a working directory holding a/a.txt, b/b.txt and
// f.txt (each "needle ours") and an outside directory holding
// secret.txt and sub/secret.txt (each outsideSecret), both resolved.
func confineTree(t *testing.T) (work, out string) {
	t.Helper()
	var err error
	if work, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if out, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	writeTree(t, work, map[string]string{"a/a.txt": "needle ours", "b/b.txt": "needle ours", "f.txt": "needle ours"})
	writeTree(t, out, map[string]string{"secret.txt": outsideSecret, "sub/secret.txt": outsideSecret})
	return work, out
}

// swapAt makes the entry rel of work a symbolic link to target, right
// before the walk opens the path when, once; it fails the test at its
// end when that moment never came.
func swapAt(t *testing.T, work, when, rel, target string) {
	t.Helper()
	var once sync.Once
	done := false
	beforeOpen = func(p string) {
		if p != when {
			return
		}
		once.Do(func() {
			if err := os.Rename(filepath.Join(work, rel), filepath.Join(work, rel+".moved")); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(target, filepath.Join(work, rel)); err != nil {
				t.Error(err)
			}
			done = true
		})
	}
	t.Cleanup(func() {
		beforeOpen = nil
		if !done {
			t.Error("the walk never opened " + when)
		}
	})
}

// callChecked runs a call as the pipeline does after a permission check
// that saw each of resolved lead where it maps to.
func callChecked(t *testing.T, tool *tools.Tool, s *tools.Session, resolved map[string]string, input string) (string, bool) {
	t.Helper()
	in, err := tool.Decode(json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	uc := &tools.UseContext{Session: s, Resolved: resolved}
	if err := in.Validate(context.Background(), uc); err != nil {
		return err.Error(), false
	}
	res, err := in.Call(context.Background(), uc, nil)
	if err != nil {
		return err.Error(), false
	}
	return res.Text, !res.IsError
}

// noOutside fails the test when text holds the outside content or, for
// a search that ran, names a file only the outside directory holds (a
// refusal may name where a link leads).
func noOutside(t *testing.T, what, text string, ran bool) {
	t.Helper()
	if strings.Contains(text, "OUTSIDE-SECRET") || ran && strings.Contains(text, "secret.txt") {
		t.Errorf("%s returned what is outside the working directory:\n%s", what, text)
	}
}

// TestWalkConfinement checks that a search walk cannot be led out of the
// directory it was started in by a symbolic link swapped in during the
// walk or after the permission check.
func TestWalkConfinement(t *testing.T) {
	searches := []struct {
		tool  func() *tools.Tool
		input string
	}{
		{Grep, `{"pattern":"needle","output_mode":"content"}`},
		{Grep, `{"pattern":"needle"}`},
		{Glob, `{"pattern":"**/*.txt"}`},
	}
	for _, sc := range searches {
		name := sc.tool().Name + sc.input
		t.Run("directory_swapped_for_link_out_mid_walk_not_descended/"+name, func(t *testing.T) {
			work, out := confineTree(t)
			s := newSession(t, work)
			swapAt(t, work, "b", "b", out)
			text, _, ok := call(t, sc.tool(), s, sc.input)
			if !ok {
				t.Fatal(text)
			}
			noOutside(t, sc.tool().Name, text, true)
			if !strings.Contains(text, "a.txt") && !strings.Contains(text, "a/a.txt") {
				t.Errorf("the rest of the tree is missing:\n%s", text)
			}
		})
		t.Run("directory_swapped_for_link_inside_mid_walk_not_descended/"+name, func(t *testing.T) {
			work, _ := confineTree(t)
			s := newSession(t, work)
			swapAt(t, work, "b", "b", filepath.Join(work, "a"))
			text, _, ok := call(t, sc.tool(), s, sc.input)
			if !ok {
				t.Fatal(text)
			}
			if strings.Contains(text, "b/a.txt") || strings.Contains(text, "b/b.txt") {
				t.Errorf("the walk entered the link:\n%s", text)
			}
		})
		t.Run("root_swapped_for_link_out_after_the_check_refused/"+name, func(t *testing.T) {
			work, out := confineTree(t)
			s := newSession(t, work)
			root := filepath.Join(work, "a")
			resolved := map[string]string{root: root}
			os.Rename(root, root+".moved")
			os.Symlink(out, root)
			input := strings.Replace(sc.input, "{", `{"path":"`+root+`",`, 1)
			text, ok := callChecked(t, sc.tool(), s, resolved, input)
			if ok {
				t.Errorf("the search ran: %s", text)
			}
			noOutside(t, sc.tool().Name, text, ok)
			if !strings.Contains(text, "outside the working directories") {
				t.Errorf("error %q does not say the path now leads outside", text)
			}
		})
	}
	t.Run("file_swapped_for_link_out_before_its_open_not_read", func(t *testing.T) {
		work, out := confineTree(t)
		s := newSession(t, work)
		swapAt(t, work, "a/a.txt", "a/a.txt", filepath.Join(out, "secret.txt"))
		text, _, ok := call(t, Grep(), s, `{"pattern":"needle","output_mode":"content"}`)
		if !ok {
			t.Fatal(text)
		}
		noOutside(t, "Grep", text, true)
		if !strings.Contains(text, "b/b.txt") {
			t.Errorf("the rest of the tree is missing:\n%s", text)
		}
	})
	t.Run("single_file_swapped_for_link_out_after_the_check_refused", func(t *testing.T) {
		work, out := confineTree(t)
		s := newSession(t, work)
		f := filepath.Join(work, "f.txt")
		os.Remove(f)
		os.Symlink(filepath.Join(out, "secret.txt"), f)
		text, ok := callChecked(t, Grep(), s, map[string]string{f: f}, `{"pattern":"needle","path":"f.txt","output_mode":"content"}`)
		if ok {
			t.Errorf("the search ran: %s", text)
		}
		noOutside(t, "Grep", text, ok)
	})
	t.Run("link_out_as_checked_searched", func(t *testing.T) {
		// A path that led outside when checked (the user allowed it) is
		// searched where it leads.
		work, out := confineTree(t)
		s := newSession(t, work)
		link := filepath.Join(work, "l")
		os.Symlink(out, link)
		text, ok := callChecked(t, Grep(), s, map[string]string{link: out}, `{"pattern":"needle","path":"l","output_mode":"content"}`)
		if !ok || !strings.Contains(text, "OUTSIDE-SECRET") {
			t.Errorf("searching a link the check allowed: %v %s", ok, text)
		}
	})
	t.Run("walk_opens_below_root_without_following_links", func(t *testing.T) {
		// confine.OpenBeneath is what keeps the walk in: a link
		// anywhere in the path makes the open fail.
		work, out := confineTree(t)
		os.Symlink(out, filepath.Join(work, "l"))
		dir, err := os.Open(work)
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		if f, err := openFileAt(rootFD(dir), "l/secret.txt", filepath.Join(work, "l/secret.txt")); err == nil {
			f.Close()
			t.Error("opened a file through a link")
		}
		if d, err := openDirAt(rootFD(dir), "l/sub", filepath.Join(work, "l/sub")); err == nil {
			d.Close()
			t.Error("opened a directory through a link")
		}
		fd, err := confine.OpenBeneath(rootFD(dir), "a/a.txt", os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		os.NewFile(uintptr(fd), "a/a.txt").Close()
	})
}

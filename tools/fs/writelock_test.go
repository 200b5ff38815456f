//go:build linux

package fs_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// onceBeforeCommit runs f before the first commit of the test's writes
// only, as another program writing the file at that moment would.
func onceBeforeCommit(t *testing.T, f func()) {
	t.Helper()
	var once sync.Once
	t.Cleanup(fs.SetBeforeCommit(func(string) { once.Do(f) }))
}

// TestWriteRechecksTheFileBeforeTheRename has another program change the
// file after a write was computed and before it is renamed into place:
// an edit is applied again to the new content (or refused when it no
// longer applies), a Write is refused, and nothing is lost either way.
func TestWriteRechecksTheFileBeforeTheRename(t *testing.T) {
	t.Run("edit_applies_again_to_the_new_content", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a\nb\n")
		h.read("f.txt")
		onceBeforeCommit(t, func() { h.put("f.txt", "a\nb\nc from another program\n") })
		res := h.ok("Edit", map[string]any{"file_path": "f.txt", "old_string": "b\n", "new_string": "B\n"})
		if got := h.get("f.txt"); got != "a\nB\nc from another program\n" {
			t.Errorf("file holds %q, want both changes", got)
		}
		contains(t, "text", res.Text, "had changed on disk since you last read it")
	})
	t.Run("multiedit_applies_again_to_the_new_content", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a\nb\n")
		h.read("f.txt")
		onceBeforeCommit(t, func() { h.put("f.txt", "z\na\nb\n") })
		h.ok("MultiEdit", map[string]any{"file_path": "f.txt", "edits": []map[string]any{
			{"old_string": "a\n", "new_string": "A\n"}, {"old_string": "b\n", "new_string": "B\n"}}})
		if got := h.get("f.txt"); got != "z\nA\nB\n" {
			t.Errorf("file holds %q, want both changes", got)
		}
	})
	t.Run("edit_that_no_longer_applies_is_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a\nb\n")
		h.read("f.txt")
		onceBeforeCommit(t, func() { h.put("f.txt", "a\nx\n") })
		h.fail("Edit", map[string]any{"file_path": "f.txt", "old_string": "b\n", "new_string": "B\n"},
			"changed on disk while this write was being made", "nothing was written")
		if got := h.get("f.txt"); got != "a\nx\n" {
			t.Errorf("file holds %q, want the other program's content", got)
		}
	})
	t.Run("write_over_a_changed_file_is_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "old\n")
		h.read("f.txt")
		onceBeforeCommit(t, func() { h.put("f.txt", "theirs\n") })
		h.fail("Write", map[string]any{"file_path": "f.txt", "content": "mine\n"},
			"changed on disk while this write was being made", "Read it again")
		if got := h.get("f.txt"); got != "theirs\n" {
			t.Errorf("file holds %q, want the other program's content", got)
		}
	})
	t.Run("write_of_a_file_created_meanwhile_is_refused", func(t *testing.T) {
		h := newHarness(t)
		onceBeforeCommit(t, func() { h.put("new.txt", "theirs\n") })
		h.fail("Write", map[string]any{"file_path": "new.txt", "content": "mine\n"},
			"changed on disk while this write was being made", "has not been read")
		if got := h.get("new.txt"); got != "theirs\n" {
			t.Errorf("file holds %q, want the other program's content", got)
		}
	})
	t.Run("notebook_edit_of_a_changed_notebook_is_refused", func(t *testing.T) {
		h := newHarness(t)
		nb := `{"cells":[{"cell_type":"code","id":"c1","metadata":{},"source":["x=1"],"outputs":[],"execution_count":null}],"metadata":{},"nbformat":4,"nbformat_minor":5}`
		h.put("n.ipynb", nb)
		h.read("n.ipynb")
		onceBeforeCommit(t, func() { h.put("n.ipynb", strings.Replace(nb, "x=1", "x=2", 1)) })
		h.fail("NotebookEdit", map[string]any{"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "y=1"},
			"changed on disk while this write was being made")
		if got := h.get("n.ipynb"); !strings.Contains(got, "x=2") {
			t.Errorf("notebook holds %q, want the other program's content", got)
		}
	})
}

// TestWriteWaitsForTheFileLock holds the file's advisory lock as another
// agent-mcp process would: the write waits for it, and a call cancelled
// while waiting says so and writes nothing.
func TestWriteWaitsForTheFileLock(t *testing.T) {
	h := newHarness(t)
	p := h.put("f.txt", "a\n")
	h.read("f.txt")
	lock, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	raw, _ := json.Marshal(map[string]any{"file_path": p, "old_string": "a", "new_string": "b"})
	out := h.p.Run(ctx, &tools.UseContext{Session: h.s}, orchestrator.Call{ID: "t", Name: "Edit", Input: raw}, nil)
	msg := ""
	if out.Err != nil {
		msg = out.Err.Error()
	} else {
		msg = out.Result.Text
	}
	if !strings.Contains(msg, "waiting for another process's lock") {
		t.Errorf("cancelled while the lock was held: %q", msg)
	}
	if got := h.get("f.txt"); got != "a\n" {
		t.Errorf("file holds %q", got)
	}

	// Released, the next write goes through.
	done := make(chan *tools.Result, 1)
	go func() { done <- h.call("Edit", map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}) }()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.IsError {
		t.Fatalf("Edit after the lock was released: %s", res.Text)
	}
	if got := h.get("f.txt"); got != "b\n" {
		t.Errorf("file holds %q", got)
	}
}

// posixACL is a system.posix_acl_access value: the owner rw, user 4242
// r, the group r, mask r, others nothing.
func posixACL() []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	_ = binary.Write(&b, le, uint32(2))
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, 0xffffffff}, {0x02, 4, 4242}, {0x04, 4, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		_ = binary.Write(&b, le, e.tag)
		_ = binary.Write(&b, le, e.perm)
		_ = binary.Write(&b, le, e.id)
	}
	return b.Bytes()
}

// TestWriteKeepsExtendedAttributes checks that the file an atomic write
// puts in place keeps the user's extended attributes and the access ACL.
func TestWriteKeepsExtendedAttributes(t *testing.T) {
	t.Parallel()
	for _, c := range writeCalls {
		t.Run(c.tool, func(t *testing.T) {
			h := newHarness(t)
			p := h.put("f.txt", "old text")
			if err := unix.Setxattr(p, "user.origin", []byte("kept"), 0); err != nil {
				t.Skipf("no user extended attributes here: %v", err)
			}
			acl := posixACL()
			if err := unix.Setxattr(p, "system.posix_acl_access", acl, 0); err != nil {
				t.Skipf("no ACLs here: %v", err)
			}
			before, _ := os.Stat(p)
			h.read("f.txt")
			h.ok(c.tool, c.input("f.txt"))
			if h.get("f.txt") == "old text" {
				t.Fatal("the file was not written")
			}
			buf := make([]byte, 256)
			n, err := unix.Getxattr(p, "user.origin", buf)
			if err != nil || string(buf[:n]) != "kept" {
				t.Errorf("user.origin after the write: %q, %v", buf[:max(n, 0)], err)
			}
			n, err = unix.Getxattr(p, "system.posix_acl_access", buf)
			if err != nil || !bytes.Equal(buf[:n], acl) {
				t.Errorf("ACL after the write: %x, %v; want %x", buf[:max(n, 0)], err, acl)
			}
			after, _ := os.Stat(p)
			if after.Mode() != before.Mode() {
				t.Errorf("mode %v, was %v", after.Mode(), before.Mode())
			}
		})
	}
}

// TestWriteRefusesHardLinkedFiles checks that a file with several names
// is not split by a write: the write is refused, every name unchanged.
func TestWriteRefusesHardLinkedFiles(t *testing.T) {
	t.Parallel()
	for _, c := range writeCalls {
		t.Run(c.tool, func(t *testing.T) {
			h := newHarness(t)
			p := h.put("f.txt", "old text")
			if err := os.Link(p, h.path("other-name.txt")); err != nil {
				t.Fatal(err)
			}
			h.read("f.txt")
			h.fail(c.tool, c.input("f.txt"), "2 hard links", "nothing was written", "cp ")
			for _, name := range []string{"f.txt", "other-name.txt"} {
				if got := h.get(name); got != "old text" {
					t.Errorf("%s holds %q", name, got)
				}
			}
			a, _ := os.Stat(p)
			b, _ := os.Stat(h.path("other-name.txt"))
			if !os.SameFile(a, b) {
				t.Error("the names no longer share one file")
			}
			// A refused write lets go of the file: once it has one
			// name, the same write goes through.
			if err := os.Remove(h.path("other-name.txt")); err != nil {
				t.Fatal(err)
			}
			h.ok(c.tool, c.input("f.txt"))
		})
	}
}

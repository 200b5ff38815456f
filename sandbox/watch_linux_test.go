package sandbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// While a command runs, a protected name it creates is moved aside at
// once, with no command starting or ending: here the name appears, and
// nothing but the watcher moves it; also when it appears beneath a
// directory that did not exist when the command started.
func TestAbsentGuard_watches_while_a_command_runs(t *testing.T) {
	dir := t.TempDir()
	envrc, attrs := filepath.Join(dir, ".envrc"), filepath.Join(dir, ".git", "info", "attributes")
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var g absentGuard
	g.begin([]string{envrc, attrs}, []string{dir}, nil, repos{}, nil)
	defer g.sweep(true)
	gone := func(p string) {
		t.Helper()
		testbin.WaitFor(t, p+" to be moved aside while the command runs", func() bool {
			_, err := os.Lstat(p)
			return os.IsNotExist(err)
		})
	}
	if err := os.WriteFile(envrc, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone(envrc)
	if err := os.MkdirAll(filepath.Dir(attrs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(attrs, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone(attrs)
	if msgs := g.report(); len(msgs) != 2 {
		t.Errorf("report = %q", msgs)
	}
}

// What the watcher reads decides whether it sweeps: a watched name made
// or renamed into place does, an unwatched one does not, and lost events
// (IN_Q_OVERFLOW, on no watch) or a watched directory moved or removed
// always do, whatever they are queued behind.
func TestWatcher_concerns(t *testing.T) {
	w := &watcher{names: map[int32]watchDir{1: {dir: "/w", names: []string{".envrc"}}}}
	event := func(wd int32, mask uint32, name string) []byte {
		b := binary.NativeEndian.AppendUint32(nil, uint32(wd))
		b = binary.NativeEndian.AppendUint32(b, mask)
		b = binary.NativeEndian.AppendUint32(b, 0)
		size := 0
		if name != "" {
			size = (len(name) + 16) &^ 15
		}
		b = binary.NativeEndian.AppendUint32(b, uint32(size))
		return append(b, append([]byte(name), make([]byte, size-len(name))...)...)
	}
	junk := bytes.Repeat(event(1, unix.IN_CREATE, "junk"), 100)
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"unwatched names", junk, false},
		{"a watched name made", append(slices.Clone(junk), event(1, unix.IN_CREATE, ".envrc")...), true},
		{"a watched name renamed into place", event(1, unix.IN_MOVED_TO, ".envrc"), true},
		{"the name in another directory", event(2, unix.IN_CREATE, ".envrc"), false},
		{"events lost", append(slices.Clone(junk), event(-1, unix.IN_Q_OVERFLOW, "")...), true},
		{"a watched directory moved", event(1, unix.IN_MOVE_SELF, ""), true},
		{"a watched directory removed", event(1, unix.IN_DELETE_SELF, ""), true},
		{"a record cut short", event(1, unix.IN_CREATE, "junk")[:20], true},
	} {
		if got := w.concerns(c.b); got != c.want {
			t.Errorf("%s: concerns = %v, want %v", c.name, got, c.want)
		}
	}
}

// Where a directory on the way to an absent name cannot be watched (the
// user's inotify watches used up: ENOSPC), the guard sweeps on a timer
// instead: a name made beneath it is still moved aside while the command
// runs, though no event tells of it.
func TestAbsentGuard_sweeps_a_way_it_cannot_watch(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, ".git")
	attrs := filepath.Join(gitDir, "info", "attributes")
	if err := os.Mkdir(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	var g absentGuard
	g.w = &watcher{f: os.NewFile(uintptr(fd), "inotify"), seen: map[int32]bool{},
		watchDir: func(ifd int, d string, since time.Time, roots []string) (int, error) {
			if d == gitDir {
				return -1, unix.ENOSPC
			}
			return watchDirectory(ifd, d, since, roots)
		}}
	go g.watchLoop(g.w)
	g.begin([]string{attrs}, []string{dir}, nil, repos{}, nil)
	defer g.sweep(true)
	g.mu.Lock()
	blind := g.w.blind
	g.mu.Unlock()
	if blind != 1 {
		t.Fatalf("blind ways = %d, want 1 (.git)", blind)
	}
	if err := os.MkdirAll(filepath.Dir(attrs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(attrs, []byte("* diff=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, attrs+" to be moved aside while the command runs", func() bool {
		_, err := os.Lstat(attrs)
		return os.IsNotExist(err)
	})
}

package fs_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
)

// dirWatch reports changes to a directory's entries as they happen.
type dirWatch struct {
	fd     int
	dir    string
	closed atomic.Bool
}

// watchDir starts watching dir with inotify: a file created, changed
// (each write, and the truncation of an open with O_TRUNC), renamed or
// removed is reported as it happens, without polling.
func watchDir(t *testing.T, dir string) *dirWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	const mask = syscall.IN_CREATE | syscall.IN_MODIFY | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	w := &dirWatch{fd: fd, dir: dir}
	t.Cleanup(func() { syscall.Close(fd) })
	return w
}

// next waits for changes and returns how many were reported; 0 once the
// watch was closed. It reads with a plain blocking system call, so it
// returns as soon as the kernel queues an event, without a trip through
// the Go scheduler's poller.
func (w *dirWatch) next() int {
	buf := make([]byte, 64<<10)
	for {
		if w.closed.Load() {
			return 0
		}
		n, err := syscall.Read(w.fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || w.closed.Load() {
			return 0
		}
		events := 0
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := binary.NativeEndian.Uint32(buf[off+12:])
			if mask&(syscall.IN_IGNORED|syscall.IN_Q_OVERFLOW) == 0 {
				events++
			}
			off += syscall.SizeofInotifyEvent + int(nameLen)
		}
		if events > 0 {
			return events
		}
	}
}

// close ends the watch: a waiting next returns 0 (woken by a change the
// watch makes itself).
func (w *dirWatch) close() {
	if w.closed.Swap(true) {
		return
	}
	os.Remove(filepath.Join(w.dir, ".wake.tmp"))
	if f, err := os.Create(filepath.Join(w.dir, ".wake.tmp")); err == nil {
		f.Close()
		os.Remove(f.Name())
	}
}

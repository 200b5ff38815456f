package sandbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// A protected name a running command creates is moved aside at once, not
// only when a command starts or ends: a background task can run for
// hours, and meanwhile the user's git (a hook planted in .git/hooks), an
// excluded command, or an editor reads what it planted. While any
// sandboxed command runs, the server watches (inotify) each directory on
// the way from a writable root to an absent protected name, and sweeps
// as soon as one of the names on that way is created, renamed into
// place, or the directory itself is moved. What is left is the time from
// the creation to the sweep (the event's delivery and one rename, well
// under a millisecond on an idle machine): no kernel mechanism refuses
// the creation itself short of a placeholder in every directory.

// watchMask is what each watched directory reports.
const watchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// watcher is one inotify instance and what its watches mean.
type watcher struct {
	f *os.File
	// names are, per watch descriptor, the directory and the names in it
	// on the way to an absent protected name.
	names map[int32]watchDir
	// dirs are the watched directories' descriptors.
	dirs map[string]int32
}

// watchDir is one watched directory.
type watchDir struct {
	dir   string
	names []string
}

// watchLocked starts the watcher if none runs and watches the ways to
// the absent names; g.mu is held.
func (g *absentGuard) watchLocked() {
	if g.w == nil {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return // no watcher: the sweeps at a command's start and end remain
		}
		g.w = &watcher{f: os.NewFile(uintptr(fd), "inotify")}
		go g.watchLoop(g.w)
	}
	// Made afresh: a watch on a directory since moved away stays in the
	// kernel, but no name of it counts any more.
	g.w.names, g.w.dirs = map[int32]watchDir{}, map[string]int32{}
	roots := append(slices.Clone(g.roots), g.given...)
	for p := range g.absent {
		child := filepath.Base(p)
		for d := filepath.Dir(p); within(d, roots); d = filepath.Dir(d) {
			if st, err := os.Lstat(d); err == nil && st.IsDir() {
				g.w.add(d, child)
			}
			if slices.Contains(roots, d) || d == "/" {
				break
			}
			child = filepath.Base(d)
		}
	}
}

// add watches dir for name.
func (w *watcher) add(dir, name string) {
	wd, ok := w.dirs[dir]
	if !ok {
		n, err := unix.InotifyAddWatch(int(w.f.Fd()), dir, watchMask)
		if err != nil {
			return
		}
		wd = int32(n)
		w.dirs[dir] = wd
	}
	e := w.names[wd]
	e.dir = dir
	if !slices.Contains(e.names, name) {
		e.names = append(e.names, name)
	}
	w.names[wd] = e
}

// unwatchLocked stops the watcher once no sandboxed command runs; g.mu is
// held.
func (g *absentGuard) unwatchLocked() {
	if g.w != nil {
		g.w.f.Close()
		g.w = nil
	}
}

// watchLoop reads w's events until it is closed and sweeps when one
// concerns a name on the way to an absent protected name.
func (g *absentGuard) watchLoop(w *watcher) {
	buf := make([]byte, 64*1024)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		g.mu.Lock()
		if g.w == w && g.running > 0 && w.concerns(buf[:n]) {
			g.sweepLocked()
			g.watchLocked()
		}
		g.mu.Unlock()
	}
}

// concerns reports whether the events in b touch a watched way: a watched
// name created or renamed into place, a watched directory moved or gone,
// or events lost.
func (w *watcher) concerns(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:4]))
		mask := binary.NativeEndian.Uint32(b[4:8])
		size := int(binary.NativeEndian.Uint32(b[12:16]))
		if unix.SizeofInotifyEvent+size > len(b) {
			return true
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+size], "\x00"))
		b = b[unix.SizeofInotifyEvent+size:]
		if mask&(unix.IN_Q_OVERFLOW|unix.IN_MOVE_SELF|unix.IN_DELETE_SELF) != 0 {
			return true
		}
		if e, ok := w.names[wd]; ok && slices.Contains(e.names, name) {
			return true
		}
	}
	return false
}

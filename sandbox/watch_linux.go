package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// A protected name a running command creates is moved aside at once, not
// only when a command starts or ends: a background task can run for
// hours, and meanwhile the user's git (a hook planted in .git/hooks), an
// excluded command, or an editor reads what it planted. While any
// sandboxed command runs, the server watches (inotify) each directory on
// the way from a writable root to an absent protected name, and sweeps
// as soon as one of the names on that way is created, renamed into
// place, or the directory itself is moved; and as soon as a repository's
// index is written (a gitlink staged names a repository the user's git
// status enters). What is left is the time from
// the creation to the sweep (the event's delivery and one rename, well
// under a millisecond on an idle machine): no kernel mechanism refuses
// the creation itself short of a placeholder in every directory.
//
// A watch cannot be left to what the command allows. Each directory is
// watched through a descriptor opened without following links; one the
// command made unreadable (mkdir -m 0: inotify needs read permission, and
// a server running as the command's user has no more) gets its owner's
// read and search rights back first, as the sweep gives a directory back
// its write right. Names created in a directory before its watch was
// added are found by a sweep right after. Where a watch still cannot be
// added (the user's inotify watches used up, a directory of the user's
// own the server cannot read) the server sweeps every blindPoll instead
// until it can.

// maxWatchedGitDirs bounds the git directories whose index is watched.
const maxWatchedGitDirs = 256

// blindPoll is how often the guard sweeps while a way is unwatched.
const blindPoll = 50 * time.Millisecond

// watchMask is what each watched directory reports.
// (IN_CLOSE_WRITE: a watched file written in place, as an index can be.)
const watchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// watcher is one inotify instance and what its watches mean.
type watcher struct {
	f *os.File
	// names are, per watch descriptor, the directory and the names in it
	// on the way to an absent protected name.
	names map[int32]watchDir
	// dirs are the watched directories' descriptors.
	dirs map[string]int32
	// added counts the watches new to the kernel added by the last
	// round, blind the directories it could not watch; seen holds every
	// watch descriptor the instance has given.
	added, blind int
	seen         map[int32]bool
	// polling is set while a goroutine sweeps for the blind ways.
	polling bool
	// watchDir adds one directory's watch; nil is watchDirectory (a
	// test makes it fail, as a used-up watch limit would).
	watchDir func(ifd int, dir string, since time.Time, roots []string) (int, error)
}

// watchDir is one watched directory.
type watchDir struct {
	dir   string
	names []string
}

// watchLocked starts the watcher if none runs and watches the ways to
// the absent names; g.mu is held.
func (g *absentGuard) watchLocked() {
	// Names made in a directory before its watch was added have sent no
	// event: a sweep after each round that added watches finds them
	// (bounded: each round watches what the previous sweep left).
	for range 4 {
		if g.watchOnceLocked() == 0 || g.w == nil {
			break
		}
		g.sweepLocked()
	}
	if w := g.w; w != nil && w.blind > 0 && !w.polling {
		w.polling = true
		go g.poll(w)
	}
}

// poll sweeps every blindPoll while some way is unwatched and w is the
// running watcher.
func (g *absentGuard) poll(w *watcher) {
	t := time.NewTicker(blindPoll)
	defer t.Stop()
	for range t.C {
		g.mu.Lock()
		if g.w != w || w.blind == 0 {
			w.polling = false
			g.mu.Unlock()
			return
		}
		if g.running > 0 {
			g.sweepLocked()
			g.watchOnceLocked()
		}
		g.mu.Unlock()
	}
}

// watchOnceLocked watches the ways to the absent names as they are now
// and returns how many watches it added; g.mu is held.
func (g *absentGuard) watchOnceLocked() int {
	if g.w == nil {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return 0 // no watcher: the sweeps at a command's start and end remain
		}
		g.w = &watcher{f: os.NewFile(uintptr(fd), "inotify"), seen: map[int32]bool{}}
		go g.watchLoop(g.w)
	}
	// Made afresh: a watch on a directory since moved away stays in the
	// kernel, but no name of it counts any more.
	g.w.names, g.w.dirs = map[int32]watchDir{}, map[string]int32{}
	g.w.added, g.w.blind = 0, 0
	roots := append(slices.Clone(g.roots), g.given...)
	if len(g.gitRoots) > 0 {
		// A running command that stages a gitlink writes an index: the
		// repository it names is swept at once, not when the command
		// ends (a background task can run for hours while the user runs
		// git status).
		for _, d := range g.gitDirs[:min(len(g.gitDirs), maxWatchedGitDirs)] {
			if within(d, roots) {
				g.w.add(d, "index", g.since, g.roots)
			}
		}
	}
	for p := range g.absent {
		child := filepath.Base(p)
		for d := filepath.Dir(p); within(d, roots); d = filepath.Dir(d) {
			if st, err := os.Lstat(d); err == nil && st.IsDir() {
				g.w.add(d, child, g.since, g.roots)
			}
			if slices.Contains(roots, d) || d == "/" {
				break
			}
			child = filepath.Base(d)
		}
	}
	return g.w.added
}

// add watches dir for name; since is the clean point (a directory
// changed after it is a command's), roots the writable roots' real paths.
func (w *watcher) add(dir, name string, since time.Time, roots []string) {
	wd, ok := w.dirs[dir]
	if !ok {
		watch := w.watchDir
		if watch == nil {
			watch = watchDirectory
		}
		n, err := watch(int(w.f.Fd()), dir, since, roots)
		if err != nil {
			if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
				w.blind++ // (gone, or a link now: its parent's watch saw that)
			}
			return
		}
		wd = int32(n)
		w.dirs[dir] = wd
		if !w.seen[wd] {
			w.seen[wd] = true
			w.added++
		}
	}
	e := w.names[wd]
	e.dir = dir
	if !slices.Contains(e.names, name) {
		e.names = append(e.names, name)
	}
	w.names[wd] = e
}

// watchDirectory adds a watch on the directory dir, opened without
// following a link; one inside roots (its real path: a command may have
// put a link on the way since the caller looked) changed since the clean
// point that its owner cannot read (a command's mkdir -m 0) gets its
// owner's read and search rights back first. The watch descriptor.
func watchDirectory(ifd int, dir string, since time.Time, roots []string) (int, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fd)
	// The descriptor's magic link names exactly the directory opened.
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	mask := uint32(watchMask &^ unix.IN_DONT_FOLLOW)
	wd, err := unix.InotifyAddWatch(ifd, self, mask)
	if !errors.Is(err, unix.EACCES) {
		return wd, err
	}
	var st unix.Stat_t
	if serr := unix.Fstat(fd, &st); serr != nil || int(st.Uid) != os.Geteuid() ||
		time.Unix(st.Ctim.Unix()).Before(since) {
		return -1, err // the user's own: not the server's to change
	}
	if real, rerr := os.Readlink(self); rerr != nil || !within(real, roots) {
		return -1, err // reached through a link to outside the roots
	}
	if cerr := unix.Fchmodat(unix.AT_FDCWD, self, st.Mode&0o7777|0o500, 0); cerr != nil {
		return -1, err
	}
	return unix.InotifyAddWatch(ifd, self, mask)
}

// unwatchLocked stops the watcher once no sandboxed command runs; g.mu is
// held.
func (g *absentGuard) unwatchLocked() {
	if g.w != nil {
		// Closing an inotify instance waits for the kernel to free its
		// watches (an SRCU grace period: 10 ms and more on a loaded
		// machine), and g.mu is held here as the last command ends: the
		// next command's start would wait for it. Nothing needs the
		// close to be over; it finishes on its own.
		go g.w.f.Close()
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

package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/tools"
)

// writeFile is a file a write tool is about to change, as found on disk.
type writeFile struct {
	// abs is the path the caller named, made absolute.
	abs string
	// target is where the bytes go: abs, or the target of the symlink abs
	// names (see writeTarget).
	target string
	// real is target with every symbolic link resolved.
	real string
	// root is the directory every operation of the write goes through,
	// and rel is real relative to it: the working directory holding real,
	// or, for a path outside them all (a write the permission check let
	// through for that path), its deepest existing ancestor. A symbolic
	// link swapped into rel after it was resolved cannot lead the write
	// out of root (see os.Root).
	root *os.Root
	rel  string
	// info is the existing file's information, nil when it does not exist.
	info fs.FileInfo
	// data is the existing file's content.
	data []byte
	// fresh compares data with what the session last saw.
	fresh freshness
	// held is the existing file, open and locked (flock) while the write
	// is made: other agent-mcp processes wait for it (see lockFile).
	held *os.File
	// unlock releases the process-wide lock on real.
	unlock func()
}

// release ends the write: other writers of the same file may proceed.
// It is safe to call more than once.
func (w *writeFile) release() {
	if w == nil {
		return
	}
	w.dropHeld()
	if w.root != nil {
		w.root.Close()
		w.root = nil
	}
	if w.unlock != nil {
		w.unlock()
		w.unlock = nil
	}
}

// exists reports whether the file is already there.
func (w *writeFile) exists() bool { return w.info != nil }

// openForWrite resolves the caller's path, refuses directories, special
// files and files with several hard links, and loads the existing content
// with its freshness. The caller must call release.
//
// Writers of one file take turns, in this process and across processes:
// a process-wide lock on the resolved path, then an advisory lock
// (flock(2)) on the existing file itself, taken before its content is
// read and held until the new content has been renamed into place (see
// lockFile). commit checks again, under the lock, that the file is still
// the one the write was computed from, so a program that does not take
// the lock is caught too.
//
// A path inside a working directory as written must also lead inside one
// after every symbolic link is resolved; from then on the file is reached
// only through an os.Root of that directory, so a link swapped in later
// cannot send the write elsewhere.
func openForWrite(ctx context.Context, s *tools.Session, path string) (w *writeFile, err error) {
	w = &writeFile{abs: s.Resolve(path)}
	if w.target, err = writeTarget(s, w.abs); err != nil {
		return nil, err
	}
	if w.real, err = confine.ResolvePath(w.target); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", w.abs, err)
	}
	if err := checkConfined(s, w.abs, w.real); err != nil {
		return nil, err
	}
	w.unlock = lockPath(w.real)
	opened := w // the returns below set w to nil
	defer func() {
		if err != nil {
			opened.release()
		}
	}()
	if w.root, w.rel, err = openWriteRoot(s, w.real); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", w.abs, err)
	}
	if err := w.load(ctx, s); err != nil {
		return nil, err
	}
	return w, nil
}

// lockWait bounds how long a write waits for another process's lock on
// the file it writes. It is fixed on purpose (docs/tools.md says why):
// agent-mcp writers hold the lock for milliseconds, so a longer hold is
// another program's, and the call's context ends the wait sooner when the
// host cancels; 2 minutes is Bash's default timeout.
const lockWait = 2 * time.Minute

// maxReplacedWhileLocking bounds how many times the file may turn out to
// have been replaced or removed between finding it and locking it: each
// writer that held the lock replaces it once, so this is far more than
// the writers waiting at once.
const maxReplacedWhileLocking = 10000

// load locks the file as it is now and reads it, setting info, data and
// fresh; a file that does not exist leaves them empty.
func (w *writeFile) load(ctx context.Context, s *tools.Session) error {
	w.dropHeld()
	w.info, w.data, w.fresh = nil, nil, notRead
	f, err := w.lockFile(ctx)
	if err != nil || f == nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("cannot read %s before writing it: %w", w.abs, err)
	}
	data, err := readAll(f, info.Size())
	if err != nil {
		f.Close()
		return fmt.Errorf("cannot read %s before writing it: %w", w.abs, err)
	}
	w.held, w.info, w.data = f, info, data
	st, known := lookupState(s, w.abs, w.target, w.real)
	w.fresh = judge(st, known, w.data, w.info)
	return nil
}

// lockFile opens the file at rel and takes its advisory lock, waiting
// (politely, up to lockWait, and no longer than ctx) for another holder
// to let go. A writer that held it may have renamed a new file into
// place, so the lock is kept only once the locked file is still the one
// at the path; otherwise the new one is locked. It returns nil, nil when
// the file does not exist, and refuses what is not a regular file with a
// single name.
func (w *writeFile) lockFile(ctx context.Context) (*os.File, error) {
	deadline := time.Now().Add(lockWait)
	delay := time.Millisecond
	for replaced := 0; ; {
		if replaced > maxReplacedWhileLocking {
			return nil, fmt.Errorf("cannot write %s: it kept being replaced by another program while this write tried to lock it; nothing was written: retry once it is done", w.abs)
		}
		info, err := w.root.Stat(w.rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil
		case err != nil:
			return nil, w.opError("cannot write %s", err)
		case info.IsDir():
			return nil, fmt.Errorf("%s is a directory, not a file: give the path of a file inside it", w.abs)
		case !info.Mode().IsRegular():
			return nil, fmt.Errorf("cannot write %s: it is a %s, not a regular file", w.abs, fileKind(info.Mode()))
		}
		// O_NONBLOCK keeps a FIFO swapped in from blocking the open.
		f, err := w.root.OpenFile(w.rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if errors.Is(err, fs.ErrNotExist) {
			replaced++
			continue // removed since the Stat: look again
		}
		if err != nil {
			return nil, w.opError("cannot read %s before writing it", err)
		}
		got, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("cannot lock %s for writing: %w", w.abs, err)
		}
		if got {
			held, err1 := f.Stat()
			now, err2 := w.root.Stat(w.rel)
			if err1 == nil && err2 == nil && os.SameFile(held, now) {
				if err := checkWritable(w.abs, held); err != nil {
					f.Close()
					return nil, err
				}
				return f, nil
			}
			f.Close()
			replaced++
			continue // replaced while we waited: lock the new file
		}
		f.Close()
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cannot write %s: another process has held a lock on it (flock) for over %s; nothing was written: retry once it is done", w.abs, lockWait)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped while waiting for another process's lock on %s; nothing was written: %w", w.abs, context.Cause(ctx))
		case <-time.After(delay):
		}
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// checkWritable refuses, on the open file's information, what a write
// must not replace: a file that is no longer regular, or one with several
// hard links. An atomic write puts a new file under one name, so the
// other names would keep the old content and the links would silently
// split; rewriting in place instead would let a crash tear the file.
func checkWritable(abs string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("cannot write %s: it is a %s, not a regular file", abs, fileKind(info.Mode()))
	}
	if n := linksOf(info); n > 1 {
		return fmt.Errorf("cannot write %s: it has %d hard links (other names for the same file), and writing it would give this name a new file while the other names kept the old content; nothing was written. "+
			"To change every name, edit the file with a program that rewrites it in place (for example through Bash); to change this name only, make it a separate file first (cp %s %s.tmp && mv %s.tmp %s), then Read it and retry",
			abs, n, shellQuote(abs), shellQuote(abs), shellQuote(abs), shellQuote(abs))
	}
	return nil
}

// dropHeld closes the held file, releasing its lock.
func (w *writeFile) dropHeld() {
	if w.held != nil {
		w.held.Close()
		w.held = nil
	}
}

// unchanged reports whether the file at the path is still the one the
// write was computed from: the same file (not replaced), not written since
// it was read (size, modification and change times), or still absent.
func (w *writeFile) unchanged() bool {
	now, err := w.root.Stat(w.rel)
	if !w.exists() {
		return errors.Is(err, fs.ErrNotExist)
	}
	if err != nil {
		return false
	}
	held, err := w.held.Stat()
	return err == nil && os.SameFile(held, now) &&
		held.Size() == w.info.Size() && held.ModTime().Equal(w.info.ModTime()) && changeTime(held) == changeTime(w.info)
}

// readAll reads f to its end into one buffer sized for size bytes, as
// os.ReadFile does: a file read whole is allocated once.
func readAll(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, 0, size+512)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// beforeCommit, when set (by tests), runs right before a write's first
// change to the disk, with the absolute path being written.
var beforeCommit func(real string)

// commit writes data to the file atomically, creating missing parent
// directories, and records that the session's view of it is current.
//
// First it checks, under the file's lock, that the file is still the one
// data was computed from. If another program changed, replaced, created or
// removed it meanwhile, nothing is written: the file is loaded again (w
// then holds its new content and freshness) and the error wraps
// errFileChanged, so the caller can compute the write again or report the
// conflict.
func (w *writeFile) commit(ctx context.Context, s *tools.Session, data []byte) error {
	if beforeCommit != nil {
		beforeCommit(w.real)
	}
	if !w.unchanged() {
		return w.reloadAfterChange(ctx, s)
	}
	if dir := filepath.Dir(w.rel); !w.exists() && dir != "." {
		if err := w.root.MkdirAll(dir, 0o777); err != nil {
			return w.opError("cannot create the directory for %s", err)
		}
	}
	info, err := writeAtomic(w.root, w.rel, data, w.info, w.held)
	if errors.Is(err, errFileChanged) {
		return w.reloadAfterChange(ctx, s)
	}
	if err != nil {
		return w.opError("cannot write %s", err)
	}
	recordWritten(s, info, w.target, data, w.abs)
	return nil
}

// reloadAfterChange loads the file again after commit found it changed,
// returning the error wrapping errFileChanged that commit reports.
func (w *writeFile) reloadAfterChange(ctx context.Context, s *tools.Session) error {
	if err := w.load(ctx, s); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w", w.abs, errFileChanged)
}

// maxCommitAttempts is how many times a write is computed again after
// commit found the file changed under it before the conflict is reported.
const maxCommitAttempts = 3

// changedMeanwhileError words a write that could not be computed again on
// the content another program wrote while it was being made.
func changedMeanwhileError(abs string, err error) error {
	return fmt.Errorf("%s changed on disk while this write was being made (another program wrote it at the same moment), and the write no longer applies to its new content; nothing was written: %w", abs, err)
}

// conflictError words a write given up because the file kept changing
// under it (another program writing it without the lock).
func conflictError(abs string) error {
	return fmt.Errorf("%s changed on disk while this write was being made (another program wrote it at the same moment); nothing was written: Read it again, then retry", abs)
}

// opError words a failed operation on the file; what is a format with
// one %s for the path. An operation refused because a symbolic link in
// the path now leads out of the root says so.
func (w *writeFile) opError(what string, err error) error {
	what = fmt.Sprintf(what, w.abs)
	if escapes(err) {
		return fmt.Errorf("%s: a symbolic link in the path now leads outside %s (the path changed after it was checked); nothing was written: %w",
			what, w.root.Name(), confine.ErrOutside)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// escapes reports whether err is os.Root's refusal of a path that leaves
// the root.
func escapes(err error) bool {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return err != nil && strings.Contains(err.Error(), "escapes")
}

// checkConfined refuses a write to a path that is inside a working
// directory as written but leads outside them all once its symbolic links
// are resolved: a symlink counts as inside only when the link and its
// target both are. A path outside them as written was judged for itself
// by the permission check.
func checkConfined(s *tools.Session, abs, real string) error {
	dirs := s.WorkDirs()
	claimed := false
	for _, d := range dirs {
		if confine.Inside(d, abs) {
			claimed = true
			break
		}
		if r, err := confine.ResolvePath(d); err == nil && confine.Inside(r, abs) {
			claimed = true
			break
		}
	}
	if !claimed || confine.New(dirs).Contains(real) {
		return nil
	}
	return fmt.Errorf("%s leads to %s through a symbolic link, which is outside the working directories (%s); refusing to write through it: to write there, give %s itself (that is checked as a path outside the working directories)",
		abs, real, strings.Join(dirs, ", "), real)
}

// openWriteRoot opens the directory a write of the resolved path real goes
// through: the working directory holding it, or the deepest existing
// ancestor of a path outside them all.
func openWriteRoot(s *tools.Session, real string) (*os.Root, string, error) {
	root, rel, ok, err := confine.New(s.WorkDirs()).RootFor(real)
	if err != nil || ok {
		return root, rel, err
	}
	dir := filepath.Dir(real)
	for {
		if _, err := os.Lstat(dir); err == nil || dir == filepath.Dir(dir) {
			break
		}
		dir = filepath.Dir(dir)
	}
	root, err = os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	rel, err = filepath.Rel(dir, real)
	if err != nil {
		root.Close()
		return nil, "", err
	}
	return root, rel, nil
}

// pathLocks serialises writers of the same file within this process.
var pathLocks = struct {
	sync.Mutex
	m map[string]*pathLock
}{m: map[string]*pathLock{}}

type pathLock struct {
	mu    sync.Mutex
	users int
}

// lockPath locks the file at p and returns the function that unlocks it.
func lockPath(p string) func() {
	pathLocks.Lock()
	l := pathLocks.m[p]
	if l == nil {
		l = &pathLock{}
		pathLocks.m[p] = l
	}
	l.users++
	pathLocks.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		pathLocks.Lock()
		if l.users--; l.users == 0 {
			delete(pathLocks.m, p)
		}
		pathLocks.Unlock()
	}
}

package fs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/agent-mcp/agent-mcp/permissions"
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
	// unlock releases the process-wide lock on real.
	unlock func()
}

// release ends the write: other writers of the same file may proceed.
// It is safe to call more than once.
func (w *writeFile) release() {
	if w == nil {
		return
	}
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

// openForWrite resolves the caller's path, refuses directories and special
// files, and loads the existing content with its freshness. It holds a
// process-wide lock on the file until release, so two sessions of one
// server cannot interleave their read-check-write of the same file; the
// caller must call release.
//
// A path inside a working directory as written must also lead inside one
// after every symbolic link is resolved; from then on the file is reached
// only through an os.Root of that directory, so a link swapped in later
// cannot send the write elsewhere.
func openForWrite(s *tools.Session, path string) (w *writeFile, err error) {
	w = &writeFile{abs: s.Resolve(path)}
	if w.target, err = writeTarget(s, w.abs); err != nil {
		return nil, err
	}
	if w.real, err = permissions.ResolvePath(w.target); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", w.abs, err)
	}
	if err := checkConfined(s, w.abs, w.real); err != nil {
		return nil, err
	}
	w.unlock = lockPath(w.real)
	defer func() {
		if err != nil {
			w.release()
			w = nil
		}
	}()
	if w.root, w.rel, err = openWriteRoot(s, w.real); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", w.abs, err)
	}
	info, err := w.root.Stat(w.rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w, nil
	case err != nil:
		return nil, w.opError("cannot write %s", err)
	case info.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file: give the path of a file inside it", w.abs)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("cannot write %s: it is a %s, not a regular file", w.abs, fileKind(info.Mode()))
	}
	if w.info, w.data, err = w.readExisting(); err != nil {
		return nil, err
	}
	st, known := lookupState(s, w.abs, w.target, w.real)
	w.fresh = judge(st, known, w.data, w.info)
	return w, nil
}

// readExisting reads the file through the root, checking on the open
// descriptor that it is still a regular file (O_NONBLOCK keeps a FIFO
// swapped in from blocking the open).
func (w *writeFile) readExisting() (fs.FileInfo, []byte, error) {
	f, err := w.root.OpenFile(w.rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, w.opError("cannot read %s before writing it", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read %s before writing it: %w", w.abs, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("cannot write %s: it is a %s, not a regular file", w.abs, fileKind(info.Mode()))
	}
	data, err := readAll(f, info.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read %s before writing it: %w", w.abs, err)
	}
	return info, data, nil
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
func (w *writeFile) commit(s *tools.Session, data []byte) error {
	if beforeCommit != nil {
		beforeCommit(w.real)
	}
	if dir := filepath.Dir(w.rel); !w.exists() && dir != "." {
		if err := w.root.MkdirAll(dir, 0o777); err != nil {
			return w.opError("cannot create the directory for %s", err)
		}
	}
	info, err := writeAtomic(w.root, w.rel, data, w.info)
	if err != nil {
		return w.opError("cannot write %s", err)
	}
	recordWritten(s, info, w.target, data, w.abs)
	return nil
}

// opError words a failed operation on the file; what is a format with
// one %s for the path. An operation refused because a symbolic link in
// the path now leads out of the root says so.
func (w *writeFile) opError(what string, err error) error {
	what = fmt.Sprintf(what, w.abs)
	if escapes(err) {
		return fmt.Errorf("%s: a symbolic link in the path now leads outside %s (the path changed after it was checked); nothing was written: %w",
			what, w.root.Name(), permissions.ErrOutside)
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
		if permissions.Inside(d, abs) {
			claimed = true
			break
		}
		if r, err := permissions.ResolvePath(d); err == nil && permissions.Inside(r, abs) {
			claimed = true
			break
		}
	}
	if !claimed || permissions.NewConfinement(dirs).Contains(real) {
		return nil
	}
	return fmt.Errorf("%s leads to %s through a symbolic link, which is outside the working directories (%s); refusing to write through it: to write there, give %s itself (that is checked as a path outside the working directories)",
		abs, real, strings.Join(dirs, ", "), real)
}

// openWriteRoot opens the directory a write of the resolved path real goes
// through: the working directory holding it, or the deepest existing
// ancestor of a path outside them all.
func openWriteRoot(s *tools.Session, real string) (*os.Root, string, error) {
	root, rel, ok, err := permissions.NewConfinement(s.WorkDirs()).RootFor(real)
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

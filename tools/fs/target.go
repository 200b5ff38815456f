package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/agent-mcp/agent-mcp/tools"
)

// writeFile is a file a write tool is about to change, as found on disk.
type writeFile struct {
	// abs is the path the caller named, made absolute.
	abs string
	// target is where the bytes go: abs, or the target of the symlink abs
	// names (see writeTarget).
	target string
	// info is the existing file's information, nil when it does not exist.
	info fs.FileInfo
	// data is the existing file's content.
	data []byte
	// fresh compares data with what the session last saw.
	fresh freshness
	// unlock releases the process-wide lock on target.
	unlock func()
}

// release ends the write: other writers of the same file may proceed.
// It is safe to call more than once.
func (w *writeFile) release() {
	if w != nil && w.unlock != nil {
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
func openForWrite(s *tools.Session, path string) (w *writeFile, err error) {
	w = &writeFile{abs: s.Resolve(path)}
	target, err := writeTarget(s, w.abs)
	if err != nil {
		return nil, err
	}
	w.target = target
	w.unlock = lockPath(target)
	defer func() {
		if err != nil {
			w.release()
			w = nil
		}
	}()
	info, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w, nil
	case err != nil:
		return nil, fmt.Errorf("cannot write %s: %w", w.abs, err)
	case info.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file: give the path of a file inside it", w.abs)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("cannot write %s: it is a %s, not a regular file", w.abs, fileKind(info.Mode()))
	}
	w.info = info
	if w.data, err = os.ReadFile(target); err != nil {
		return nil, fmt.Errorf("cannot read %s before writing it: %w", w.abs, err)
	}
	st, known := lookupState(s, w.abs, w.target)
	w.fresh = judge(st, known, w.data, info)
	return w, nil
}

// commit writes data to the file atomically, creating missing parent
// directories, and records that the session's view of it is current.
func (w *writeFile) commit(s *tools.Session, data []byte) error {
	if !w.exists() {
		if err := os.MkdirAll(filepath.Dir(w.target), 0o777); err != nil {
			return fmt.Errorf("cannot create the directory for %s: %w", w.abs, err)
		}
	}
	if err := writeAtomic(w.target, data, w.info); err != nil {
		return fmt.Errorf("cannot write %s: %w", w.abs, err)
	}
	recordWritten(s, w.target, data, w.abs)
	return nil
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

package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-mcp/agent-mcp/tools"
)

// writeAtomic replaces the file at path with data so that a crash at any
// moment leaves either the old content or the new one, never a mix: the
// data goes to a temporary file in the same directory, is flushed to disk,
// and is renamed over path; then the directory is flushed so the rename
// itself is durable.
//
// old is the file being replaced (nil for a new file): its permission bits
// (with setuid, setgid and sticky) and, where the platform allows, its
// owner are given to the new file. A new file gets 0666 less the umask,
// as any program creating a file would.
func writeAtomic(path string, data []byte, old fs.FileInfo) (err error) {
	dir := filepath.Dir(path)
	tmp, f, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if old != nil {
		if err = f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return fmt.Errorf("keeping the mode of %s: %w", path, err)
		}
		keepOwner(f, old)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("flushing %s to disk: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// createTemp makes a new, empty file beside the one being written. Its
// name starts with a dot so listings and watchers tend to skip it; it is
// created with mode 0666 so the umask applies as for any new file.
func createTemp(dir, base string) (string, *os.File, error) {
	for range 100 {
		name := filepath.Join(dir, "."+base+".agent-mcp-"+tools.RandomID()[:12]+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return name, f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", nil, fmt.Errorf("cannot create a temporary file in %s: %w", dir, err)
		}
	}
	return "", nil, fmt.Errorf("cannot create a temporary file in %s: too many name collisions", dir)
}

// syncDir flushes a directory so a rename in it survives a power loss.
// Failures are ignored: some file systems do not support it, and the
// rename has already happened.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}

// writeTarget resolves where a write to abs must go. When abs's final
// component is a symbolic link, the write goes to the link's target (so the
// link survives) but only when that target lies inside one of the session's
// working directories; a link pointing elsewhere is refused rather than
// followed blindly. A link whose target does not exist yet resolves to the
// path the target would have.
func writeTarget(s *tools.Session, abs string) (string, error) {
	info, err := os.Lstat(abs)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return abs, nil
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// A dangling link: follow it one step at a time by hand.
		target, err = danglingTarget(abs)
		if err != nil {
			return "", fmt.Errorf("%s is a symbolic link that cannot be resolved: %w", abs, err)
		}
	}
	if !insideWorkDirs(s, target) {
		return "", fmt.Errorf("%s is a symbolic link to %s, which is outside the working directories (%s); refusing to write through it: write to a path inside them instead",
			abs, target, strings.Join(s.WorkDirs(), ", "))
	}
	return target, nil
}

// danglingTarget resolves a chain of links ending at a path that does not
// exist: the directory part is resolved, the missing name is kept.
func danglingTarget(abs string) (string, error) {
	p := abs
	for range 40 {
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(p))
			if err != nil {
				return "", err
			}
			return filepath.Join(dir, filepath.Base(p)), nil
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return filepath.EvalSymlinks(p)
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = filepath.Clean(link)
	}
	return "", errors.New("too many levels of symbolic links")
}

// insideWorkDirs reports whether the resolved path p lies in one of the
// session's working directories, comparing whole path components (so
// /work/a2 is not inside /work/a). Each working directory is compared both
// as given and with its own symlinks resolved, since p is fully resolved.
func insideWorkDirs(s *tools.Session, p string) bool {
	for _, d := range s.WorkDirs() {
		if within(d, p) {
			return true
		}
		if r, err := filepath.EvalSymlinks(d); err == nil && within(r, p) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or lies below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

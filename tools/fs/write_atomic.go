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

// errFileChanged reports that the file a write was computed from is no
// longer what is on disk: another program wrote, replaced, created or
// removed it meanwhile. Nothing was written.
var errFileChanged = errors.New("the file changed on disk while the write was being made")

// writeAtomic replaces the file rel (relative to root) with data so that
// a crash at any moment leaves either the old content or the new one,
// never a mix: the data goes to a temporary file in the same directory, is
// flushed to disk, and is renamed over rel; then the directory is flushed
// so the rename itself is durable. Every step goes through root, so a
// symbolic link swapped into rel cannot lead any of them out of it. It
// returns the information of the file written.
//
// old is the file being replaced (nil for a new file) and src an open
// descriptor of it: its permission bits (with setuid, setgid and sticky),
// its extended attributes (user.*) and access ACL, and, where the platform
// allows, its owner are given to the new file. A new file gets 0666 less
// the umask, as any program creating a file would, and is never put over
// a file another program created meanwhile (errFileChanged).
func writeAtomic(root *os.Root, rel string, data []byte, old fs.FileInfo, src *os.File) (info fs.FileInfo, err error) {
	dir := filepath.Dir(rel)
	tmp, f, err := createTemp(root, dir, filepath.Base(rel))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	shown := filepath.Join(root.Name(), tmp)
	if _, err = f.Write(data); err != nil {
		return nil, fmt.Errorf("writing %s: %w", shown, err)
	}
	if old != nil {
		if err = f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return nil, fmt.Errorf("keeping the mode: %w", err)
		}
		keepOwner(f, old)
		if src != nil {
			if err = copyXattrs(f, src); err != nil {
				return nil, err
			}
		}
	}
	if err = f.Sync(); err != nil {
		return nil, fmt.Errorf("flushing %s to disk: %w", shown, err)
	}
	if info, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("checking %s: %w", shown, err)
	}
	if err = f.Close(); err != nil {
		return nil, fmt.Errorf("closing %s: %w", shown, err)
	}
	if old == nil {
		err = createName(root, tmp, rel)
	} else {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		return nil, err
	}
	syncDir(root, dir)
	return info, nil
}

// createName renames tmp to rel (both relative to root, in the same
// directory) only if rel does not exist, reporting errFileChanged if it
// does. Where the system cannot rename without replacing, the name is
// checked just before the rename.
func createName(root *os.Root, tmp, rel string) error {
	d, err := root.Open(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer d.Close()
	supported, err := renameNoReplace(d, filepath.Base(tmp), filepath.Base(rel))
	if supported {
		if errors.Is(err, fs.ErrExist) {
			return errFileChanged
		}
		return err
	}
	if _, err := root.Lstat(rel); err == nil {
		return errFileChanged
	}
	return root.Rename(tmp, rel)
}

// createTemp makes a new, empty file in dir (relative to root) beside the
// file base being written, returning its name relative to root. Its name
// starts with a dot so listings and watchers tend to skip it; it is
// created with mode 0666 so the umask applies as for any new file.
func createTemp(root *os.Root, dir, base string) (string, *os.File, error) {
	for range 100 {
		name := filepath.Join(dir, "."+base+".agent-mcp-"+tools.RandomID()[:12]+".tmp")
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return name, f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", nil, fmt.Errorf("cannot create a temporary file in %s: %w", filepath.Join(root.Name(), dir), err)
		}
	}
	return "", nil, fmt.Errorf("cannot create a temporary file in %s: too many name collisions", filepath.Join(root.Name(), dir))
}

// syncDir flushes the directory dir (relative to root) so a rename in it
// survives a power loss. Failures are ignored: some file systems do not
// support it, and the rename has already happened.
func syncDir(root *os.Root, dir string) {
	d, err := root.Open(dir)
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

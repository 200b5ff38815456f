package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinks bounds how many links ResolvePath follows, as the kernel does.
const maxSymlinks = 40

// ResolvePath returns the absolute path p leads to, following every
// symlink component by component. Unlike filepath.EvalSymlinks it does not
// fail on a path that does not exist yet: the missing tail is appended as
// written, and a dangling symlink is followed to where it points, so a
// write through it is judged by its target.
func ResolvePath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("resolving %q: the path must be absolute", p)
	}
	todo := splitPath(filepath.Clean(p))
	done := "/"
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
				// Nothing further exists: the rest is taken as written
				// (".." then undoes a name that does not exist).
				done = next
				continue
			}
			return "", fmt.Errorf("resolving %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("resolving %s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolving %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		todo = append(splitPath(target), todo...)
	}
	return done, nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// Inside reports whether path is dir or below it, comparing whole path
// components (never a string prefix: /work/app-evil is not inside
// /work/app). Both must be absolute and clean; no symlink is resolved.
func Inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// Confinement is a set of working directories, resolved once.
type Confinement struct {
	dirs     []string // as given, cleaned
	resolved []string // symlinks resolved
}

// NewConfinement makes the confinement of dirs (absolute paths).
func NewConfinement(dirs []string) *Confinement {
	c := &Confinement{}
	for _, d := range dirs {
		d = filepath.Clean(d)
		c.dirs = append(c.dirs, d)
		r, err := ResolvePath(d)
		if err != nil {
			r = d
		}
		c.resolved = append(c.resolved, r)
	}
	return c
}

// Dirs are the working directories as given.
func (c *Confinement) Dirs() []string { return append([]string(nil), c.dirs...) }

// Contains reports whether the absolute path abs is inside the working
// directories: both where it is written (a symlink's own location) and
// where it leads after every symlink is resolved must be inside one of
// them. A path that cannot be resolved is outside.
func (c *Confinement) Contains(abs string) bool {
	abs = filepath.Clean(abs)
	real, err := ResolvePath(abs)
	if err != nil {
		return false
	}
	return c.containsResolved(real) && (c.containsLexical(abs) || c.containsResolved(abs))
}

func (c *Confinement) containsResolved(p string) bool {
	for _, d := range c.resolved {
		if Inside(d, p) {
			return true
		}
	}
	return false
}

func (c *Confinement) containsLexical(p string) bool {
	for _, d := range c.dirs {
		if Inside(d, p) {
			return true
		}
	}
	return false
}

// ErrOutside is returned by [OpenFile] for a path whose resolution leaves
// the directory it is written under.
var ErrOutside = errors.New("path leads outside the working directories")

// RootFor opens the working directory that holds abs as an os.Root and
// returns abs relative to it. Operations through the root cannot follow a
// symlink out of it, so a link swapped in after the permission check
// cannot redirect a write. ok is false when abs is not under any working
// directory as written; the caller then has a permission decision for that
// path itself and opens it directly.
func (c *Confinement) RootFor(abs string) (root *os.Root, rel string, ok bool, err error) {
	abs = filepath.Clean(abs)
	for _, list := range [][]string{c.dirs, c.resolved} {
		for _, d := range list {
			if !Inside(d, abs) {
				continue
			}
			r, err := filepath.Rel(d, abs)
			if err != nil {
				continue
			}
			root, err := os.OpenRoot(d)
			if err != nil {
				return nil, "", true, err
			}
			return root, r, true, nil
		}
	}
	real, err := ResolvePath(abs)
	if err == nil && real != abs {
		for _, d := range c.resolved {
			if Inside(d, real) {
				return c.RootFor(real)
			}
		}
	}
	return nil, "", false, nil
}

// OpenFile opens abs like os.OpenFile, but when abs is inside one of the
// working directories it is opened through an os.Root of that directory,
// so the check that it is inside and the open cannot be raced apart by a
// symlink swapped in between: such an open fails with an error wrapping
// [ErrOutside]. A path outside every working directory is opened directly
// (its permission was decided for that path).
func OpenFile(dirs []string, abs string, flag int, perm os.FileMode) (*os.File, error) {
	c := NewConfinement(dirs)
	root, rel, ok, err := c.RootFor(abs)
	if err != nil {
		return nil, err
	}
	if !ok {
		return os.OpenFile(abs, flag, perm)
	}
	defer root.Close()
	f, err := root.OpenFile(rel, flag, perm)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
			return nil, fmt.Errorf("opening %s: %w (a symbolic link points outside)", abs, ErrOutside)
		}
		return nil, err
	}
	return f, nil
}

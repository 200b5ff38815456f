package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Confinement is a set of working directories, resolved once.
type Confinement struct {
	dirs     []string // as given, cleaned
	resolved []string // symlinks resolved
}

// New makes the confinement of dirs (absolute paths).
func New(dirs []string) *Confinement {
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
	c := New(dirs)
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

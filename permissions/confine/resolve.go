package confine

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
	done := rootOf(p)
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
			done = rootOf(target)
		}
		todo = append(splitPath(target), todo...)
	}
	return done, nil
}

// ResolvePhysical is [ResolvePath] for a path the kernel will walk as
// written: a `..` goes up from where the components before it lead, after
// their symbolic links are followed (`link/../x` is next to the link's
// target, not next to the link), which is what a shell command opening
// the path gets.
func ResolvePhysical(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("resolving %q: the path must be absolute", p)
	}
	done := rootOf(p)
	for _, c := range splitPath(p) {
		if c == ".." {
			done = filepath.Dir(done)
			continue
		}
		next, err := ResolvePath(filepath.Join(done, c))
		if err != nil {
			return "", err
		}
		done = next
	}
	return done, nil
}

// rootOf is the root of the absolute path p: "/", or on Windows its
// volume and a separator (`C:\`).
func rootOf(p string) string {
	return filepath.VolumeName(p) + string(filepath.Separator)
}

// splitPath is p's components after its volume name (Windows), without
// empty ones and ".".
func splitPath(p string) []string {
	var out []string
	p = p[len(filepath.VolumeName(p)):]
	for _, c := range strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) }) {
		if c != "." {
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
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

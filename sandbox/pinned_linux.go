package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// revert moves aside whatever now lies at the protected path p, which was
// absent at the clean point. The server acts outside the sandbox, so it
// must never be steered by what a command planted: it walks p from the
// root one component at a time, through descriptors opened without
// following links, resolving in its own code only the links that were
// there before the clean point (a ctime from before since: a command
// cannot make an old one), and it acts only inside roots (the real paths
// of the writable roots). A link put on the way since (`.git/info` made a
// link to a directory outside, `~/.config` one to /usr/bin) is itself
// what is moved aside: it would lead the user's tools to a name the
// command chose. With changedOnly the name is moved only if it changed
// since (it existed before, perhaps). failed says a found name could
// not be moved aside.
func revert(p string, roots []string, since time.Time, changedOnly bool) (msg string, failed bool) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer func() { unix.Close(fd) }()
	cur := "/"
	comps := splitPath(p)
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			up, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return "", false
			}
			unix.Close(fd)
			fd, cur = up, filepath.Dir(cur)
			continue
		}
		here := filepath.Join(cur, c)
		var st unix.Stat_t
		if err := withAccess(fd, cur, roots, func() error {
			return unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		}); err != nil {
			return "", false // nothing there (or nothing the server can see)
		}
		if len(comps) == 0 {
			// The protected name itself, absent at the clean point.
			if !within(here, roots) || c == ".git" && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				// Outside the roots no command made it; a new .git
				// directory is a repository whose parts are guarded.
				return "", false
			}
			if changedOnly && time.Unix(st.Ctim.Unix()).Before(since) {
				return "", false
			}
			return moveAsideAt(fd, cur, c, roots, p, "")
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if !time.Unix(st.Ctim.Unix()).Before(since) {
				if !within(here, roots) {
					return "", false
				}
				return moveAsideAt(fd, cur, c, roots, p, "a link put on the way to ")
			}
			if links++; links > 40 {
				return "", false
			}
			target, err := readlinkat(fd, c)
			if err != nil {
				return "", false
			}
			if filepath.IsAbs(target) {
				root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					return "", false
				}
				unix.Close(fd)
				fd, cur = root, "/"
			}
			comps = append(splitPath(target), comps...)
		case unix.S_IFDIR:
			var next int
			if err := withAccess(fd, cur, roots, func() (err error) {
				next, err = unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				return err
			}); err != nil {
				return "", false
			}
			unix.Close(fd)
			fd, cur = next, here
		default:
			return "", false // a file where a directory was: nothing beneath it
		}
	}
	return "", false
}

// moveAsideAt renames name in the directory dirFD (at path dir) to an
// unused name beside it, never replacing one (a rename moves a link,
// never what it points to), and says what it did; why prefixes the
// protected path p in the message when name is not p itself.
func moveAsideAt(dirFD int, dir, name string, roots []string, p, why string) (string, bool) {
	what := p + ", a protected name,"
	if why != "" {
		what = filepath.Join(dir, name) + ", " + why + p + ","
	}
	var err error
	for n := 0; n < asideTries; n++ {
		dst := asideName(name, n)
		err = withAccess(dirFD, dir, roots, func() error {
			return unix.Renameat2(dirFD, name, dirFD, dst, unix.RENAME_NOREPLACE)
		})
		if errors.Is(err, unix.EINVAL) {
			// A file system without RENAME_NOREPLACE.
			var st unix.Stat_t
			if unix.Fstatat(dirFD, dst, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				continue
			}
			err = withAccess(dirFD, dir, roots, func() error { return unix.Renameat(dirFD, name, dirFD, dst) })
		}
		if err == nil {
			return fmt.Sprintf("%s was created by a sandboxed command: moved aside to %s", what, filepath.Join(dir, dst)), false
		}
		if !errors.Is(err, unix.EEXIST) && !errors.Is(err, unix.ENOTEMPTY) {
			break
		}
	}
	return fmt.Sprintf("%s was created by a sandboxed command and could not be moved aside: %v", what, err), true
}

// withAccess runs op on the directory dirFD; where it fails for want of
// permission and the directory lies inside roots (a command owning it can
// take its write or search bit away, so that the server, as the same
// user, could not move what it planted), it gives the owner every right
// on the directory, runs op again and puts the mode back.
func withAccess(dirFD int, dir string, roots []string, op func() error) error {
	err := op()
	if !errors.Is(err, unix.EACCES) || !within(dir, roots) {
		return err
	}
	var st unix.Stat_t
	if unix.Fstat(dirFD, &st) != nil {
		return err
	}
	self := fmt.Sprintf("/proc/self/fd/%d", dirFD)
	mode := st.Mode & 0o7777
	if unix.Chmod(self, mode|0o700) != nil {
		return err
	}
	defer unix.Chmod(self, mode)
	return op()
}

// readlinkat reads the link name in dirFD.
func readlinkat(dirFD int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirFD, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// splitPath splits a path into its components.
func splitPath(p string) []string {
	return strings.Split(strings.Trim(p, "/"), "/")
}

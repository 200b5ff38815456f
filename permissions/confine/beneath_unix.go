//go:build unix

package confine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// readFlag opens a file for reading without blocking on a named pipe.
const readFlag = os.O_RDONLY | syscall.O_NONBLOCK

// openOutside opens a path outside the working directories for
// [OpenRead]: following no link (openNoLinks).
func openOutside(abs, real string, flag int) (*os.File, error) { return openNoLinks(abs, real, flag) }

// openNoLinks opens real, a path with every symbolic link resolved, from
// the file system root following no link: one swapped in since real was
// resolved makes the open fail. abs is the path as the caller named it,
// for messages.
func openNoLinks(abs, real string, flag int) (*os.File, error) {
	rootfd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	defer unix.Close(rootfd)
	rel := strings.TrimPrefix(real, "/")
	if rel == "" {
		rel = "."
	}
	fd, err := OpenBeneath(rootfd, rel, flag)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s: a symbolic link was swapped into %s after it was resolved, so nothing was read (try again if the change was expected): %w",
				abs, real, ErrOutside)
		}
		return nil, &os.PathError{Op: "open", Path: real, Err: err}
	}
	return os.NewFile(uintptr(fd), real), nil
}

// OpenBeneath opens rel, a slash-separated path below the directory open
// as dirfd ("." for that directory itself), following no symbolic link in
// any of its components and never leaving the directory: a link anywhere
// in rel makes it fail with ELOOP (or ENOTDIR). flag is as for open(2);
// O_NOFOLLOW and O_CLOEXEC are added. It returns the new descriptor.
//
// On Linux 5.6 and later this is one openat2 call with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS; elsewhere, or where openat2 is refused, rel is
// opened one component at a time with O_NOFOLLOW.
func OpenBeneath(dirfd int, rel string, flag int) (int, error) {
	if strings.HasPrefix(rel, "/") || strings.Contains(rel, "..") && hasDotDot(rel) {
		return -1, unix.EXDEV
	}
	if fd, err, done := openBeneathFast(dirfd, rel, flag); done {
		return fd, err
	}
	return openBeneathSlow(dirfd, rel, flag)
}

// hasDotDot reports whether a component of the slash-separated rel is "..".
func hasDotDot(rel string) bool {
	for _, p := range strings.Split(rel, "/") {
		if p == ".." {
			return true
		}
	}
	return false
}

// openBeneathSlow opens rel one component at a time, each directory with
// O_NOFOLLOW relative to the one before.
func openBeneathSlow(dirfd int, rel string, flag int) (int, error) {
	var parts []string
	for _, p := range strings.Split(rel, "/") {
		switch p {
		case "", ".":
		case "..":
			return -1, unix.EXDEV
		default:
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		parts = []string{"."}
	}
	cur := dirfd
	closeCur := func() {
		if cur != dirfd {
			unix.Close(cur)
		}
	}
	defer closeCur()
	for _, p := range parts[:len(parts)-1] {
		fd, err := openatRetry(cur, p, dirSearchFlag|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err != nil {
			return -1, err
		}
		closeCur()
		cur = fd
	}
	return openatRetry(cur, parts[len(parts)-1], flag|unix.O_NOFOLLOW|unix.O_CLOEXEC)
}

func openatRetry(dirfd int, name string, flag int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag, 0)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

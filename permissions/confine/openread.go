//go:build unix

package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// beforeOpen, when set (by tests), runs in [OpenRead] after the path is
// resolved and right before it is opened, with the resolved path.
var beforeOpen func(real string)

// OpenRead opens the absolute path abs for reading, a file or a directory,
// so that a symbolic link swapped into the path cannot send the read
// somewhere it was not judged to go:
//
//   - abs is resolved now; when it leads inside one of the working
//     directories dirs, it is opened through an os.Root of that directory
//     ([OpenFile], as the writing tools do), which no link can lead out of;
//   - otherwise it must lead where it led when the permission check let
//     the call through. checked maps each path the check judged (absolute
//     and clean, as the call named it) to where it led then, every link
//     resolved (tools.UseContext.Resolved). A path that leads elsewhere
//     outside the working directories now, or that the check did not judge,
//     is refused with an error wrapping [ErrOutside]. checked is nil when
//     no check of paths ran: a path outside is then read where it leads;
//   - a path outside is opened by its resolved path following no symbolic
//     link in any component, so a link swapped in after it was resolved
//     makes the open fail rather than go elsewhere.
//
// The file is opened with O_NONBLOCK, so a named pipe swapped in cannot
// block the open; callers check the kind of what they got on the
// descriptor (Stat), not on the path.
func OpenRead(dirs []string, checked map[string]string, abs string) (*os.File, error) {
	abs = filepath.Clean(abs)
	real, err := ResolvePath(abs)
	if err != nil {
		return nil, err
	}
	c := New(dirs)
	inside := c.containsResolved(real)
	if !inside && checked != nil {
		then, judged := checked[abs]
		if !judged {
			return nil, fmt.Errorf("%s leads to %s, outside the working directories (%s), and the permission check did not judge that path: %w",
				abs, real, strings.Join(c.dirs, ", "), ErrOutside)
		}
		if then != real {
			return nil, fmt.Errorf("%s now leads to %s, outside the working directories (%s), but led to %s when the permission check was made: a symbolic link in the path changed after the check, so nothing was read: %w",
				abs, real, strings.Join(c.dirs, ", "), then, ErrOutside)
		}
	}
	if beforeOpen != nil {
		beforeOpen(real)
	}
	const flag = os.O_RDONLY | syscall.O_NONBLOCK
	if inside {
		f, err := OpenFile(dirs, real, flag, 0)
		if errors.Is(err, ErrOutside) {
			return nil, fmt.Errorf("%s: a symbolic link in the path now leads outside the working directories (the path changed after it was resolved), so nothing was read: %w", abs, ErrOutside)
		}
		return f, err
	}
	return openNoLinks(abs, real, flag)
}

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

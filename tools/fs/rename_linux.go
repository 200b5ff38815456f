package fs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames old to new, both names in the directory d,
// failing with fs.ErrExist when new already exists (renameat2 with
// RENAME_NOREPLACE), so a file created by another program meanwhile is
// never replaced. supported is false where the kernel or the file system
// cannot do it; nothing was renamed then.
func renameNoReplace(d *os.File, old, new string) (supported bool, err error) {
	err = unix.Renameat2(int(d.Fd()), old, int(d.Fd()), new, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return true, os.ErrExist
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.ENOTSUP):
		return false, nil
	}
	return true, &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
}

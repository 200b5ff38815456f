package fs

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// keptXattr reports whether an extended attribute is carried over to the
// file that replaces its owner: the user's own attributes (user.*) and the
// access ACL (system.posix_acl_access). Attributes in the security and
// trusted namespaces are the system's business (an SELinux label is given
// by policy, file capabilities must not be copied onto new content).
func keptXattr(name string) bool {
	return strings.HasPrefix(name, "user.") || name == "system.posix_acl_access"
}

// copyXattrs gives dst the extended attributes (user.*) and the access ACL
// of src, so a file replaced by an atomic write keeps them. A file system
// without extended attributes has none to copy.
func copyXattrs(dst, src *os.File) error {
	names, err := listXattrs(src)
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return fmt.Errorf("listing the extended attributes: %w", err)
	}
	for _, name := range names {
		if !keptXattr(name) {
			continue
		}
		value, err := getXattr(src, name)
		if errors.Is(err, unix.ENODATA) {
			continue // removed meanwhile
		}
		if err != nil {
			return fmt.Errorf("reading the extended attribute %s: %w", name, err)
		}
		if err := unix.Fsetxattr(int(dst.Fd()), name, value, 0); err != nil {
			return fmt.Errorf("keeping the extended attribute %s: %w", name, err)
		}
	}
	return nil
}

func listXattrs(f *os.File) ([]string, error) {
	size := 1024
	for {
		buf := make([]byte, size)
		n, err := unix.Flistxattr(int(f.Fd()), buf)
		if errors.Is(err, unix.ERANGE) && size < 1<<20 {
			size *= 4
			continue
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, name := range strings.Split(string(buf[:n]), "\x00") {
			if name != "" {
				names = append(names, name)
			}
		}
		return names, nil
	}
}

func getXattr(f *os.File, name string) ([]byte, error) {
	size := 256
	for {
		buf := make([]byte, size)
		n, err := unix.Fgetxattr(int(f.Fd()), name, buf)
		if errors.Is(err, unix.ERANGE) && size < 1<<20 {
			size *= 4
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}

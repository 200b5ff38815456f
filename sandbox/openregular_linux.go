package sandbox

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// errNotRegular is a path that does not lead to a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens the regular file path leads to, following links as
// git does, for reading: what is opened is checked before it is opened
// for reading (a path-only descriptor first), so that a link a command
// planted to a device or a FIFO is never opened as one.
func openRegular(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errNotRegular
	}
	// The descriptor's magic link reopens exactly the file checked.
	return os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
}

package fs

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// openDirBeneath opens the directory rel below the directory open as the
// handle dirfd. Windows has no openat, so the directory's final path is
// read back from the handle and rel is opened through an os.Root there:
// a link in rel is followed only where it stays below that directory.
// name names the result.
func openDirBeneath(dirfd int, rel, name string) (*os.File, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(dirfd), &buf[0], uint32(len(buf)), 0)
	if err != nil {
		return nil, fmt.Errorf("reading the listed directory's path: %w", err)
	}
	root, err := os.OpenRoot(windows.UTF16ToString(buf[:n]))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is not a directory", name)
	}
	return f, nil
}

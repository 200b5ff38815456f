//go:build !windows

package fs

import (
	"os"
	"syscall"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// openDirBeneath opens the directory rel below the directory open as
// dirfd, following no symbolic link on the way; name names the result.
func openDirBeneath(dirfd int, rel, name string) (*os.File, error) {
	fd, err := confine.OpenBeneath(dirfd, rel, os.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

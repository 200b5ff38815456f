//go:build unix

package fs

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of the file it replaces. It only
// succeeds for a privileged process or when nothing changes; failures are
// ignored because the content and mode matter more than ownership.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}

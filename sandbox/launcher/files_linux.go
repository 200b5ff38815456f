package launcher

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// shellFiles are the descriptors init passes on to the shell (after
// ServerFD), close-on-exec in init itself so that they reach the shell
// only as 3, 4, ...
func shellFiles(p Plan) []*os.File {
	var files []*os.File
	for i := range p.ShellFiles {
		fd := p.ServerFD + 1 + i
		syscall.CloseOnExec(fd)
		files = append(files, os.NewFile(uintptr(fd), "shell"))
	}
	return files
}

// bindWritableAgain makes the plan's WritableAgain paths writable after
// the read-only binds that covered them.
func bindWritableAgain(p Plan) error {
	for _, w := range p.WritableAgain {
		if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("binding writable %s: %w", w, err)
		}
		err := unix.MountSetattr(-1, w, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
		if err != nil {
			return fmt.Errorf("making %s writable: %w", w, err)
		}
	}
	return nil
}

// pinAncestors binds each of the plan's Pinned directories onto itself,
// keeping its flags: a mount point cannot be renamed (EBUSY), so a command
// cannot move a read-only bind or a mask away with its parent.
func pinAncestors(p Plan) error {
	for _, d := range p.Pinned {
		if err := unix.Mount(d, d, "", unix.MS_BIND, ""); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				continue
			}
			return fmt.Errorf("pinning %s: %w", d, err)
		}
	}
	return nil
}

// dropTerminal gives up the controlling terminal init inherited from the
// server, if any, so that neither init nor the command can reach it
// (/dev/tty then fails with ENXIO; TIOCSTI could otherwise type a line
// into the user's shell). init is not a session leader, so only it loses
// the terminal, and its children inherit none.
func dropTerminal() {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return // none
	}
	_ = unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0)
	unix.Close(fd)
}

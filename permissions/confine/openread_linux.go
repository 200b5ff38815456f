package confine

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirSearchFlag opens a directory only to look names up in it: O_PATH
// needs no read permission on it, as a path lookup does not.
const dirSearchFlag = unix.O_PATH

// noOpenat2 is set once openat2 turns out to be missing (Linux before
// 5.6) or refused (an old seccomp profile).
var noOpenat2 atomic.Bool

// openBeneathFast opens rel with one openat2 call; done is false when
// openat2 is not available and the caller must do it another way.
func openBeneathFast(dirfd int, rel string, flag int) (fd int, err error, done bool) {
	if noOpenat2.Load() {
		return -1, nil, false
	}
	how := unix.OpenHow{
		Flags:   uint64(flag | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for tries := 0; ; tries++ {
		fd, err = unix.Openat2(dirfd, rel, &how)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && tries < 8:
			// A rename raced with the lookup; the kernel asks to retry.
			continue
		case err == unix.ENOSYS || err == unix.EPERM:
			noOpenat2.Store(true)
			return -1, nil, false
		}
		return fd, err, true
	}
}

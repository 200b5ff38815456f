package launcher

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The plumbing of seccomp user notification, shared by the launcher's
// supervisor of creating calls (fsguard_linux.go) and the server's of
// sockets (package sandbox, supervise_linux.go).

// SeccompData is struct seccomp_data (linux/seccomp.h).
type SeccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

// SeccompNotif is struct seccomp_notif: one call a filter sent.
type SeccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  SeccompData
}

// SeccompResp is struct seccomp_notif_resp: the answer.
type SeccompResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// SeccompAddfd is struct seccomp_notif_addfd: a descriptor to install in
// the caller.
type SeccompAddfd struct {
	ID         uint64
	Flags      uint32
	Srcfd      uint32
	Newfd      uint32
	NewfdFlags uint32
}

// SeccompIoctl is an ioctl on a seccomp listener.
func SeccompIoctl(fd int, req uint, arg unsafe.Pointer) (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// NotifValid reports whether the notification id on the listener fd
// still waits for its answer (so its pid still names the caller).
func NotifValid(fd int, id uint64) bool {
	_, err := SeccompIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id))
	return err == nil
}

// pidfdThread is PIDFD_THREAD (Linux 6.9+): a pidfd for one thread.
const pidfdThread = unix.O_EXCL

// TaskPidfd opens a pidfd for the task tid (a notification names the
// calling thread, which may be none of its process's leader): the thread
// itself where the kernel can (PIDFD_THREAD), else its thread group,
// whose descriptor table its threads share.
func TaskPidfd(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if !errors.Is(err, unix.EINVAL) {
		return fd, err
	}
	if fd, err = unix.PidfdOpen(tid, 0); !errors.Is(err, unix.EINVAL) {
		return fd, err // the thread is its process's leader
	}
	tgid, err := threadGroup(tid)
	if err != nil {
		return -1, err
	}
	return unix.PidfdOpen(tgid, 0)
}

// threadGroup is the thread group (process) of the task tid.
func threadGroup(tid int) (int, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return -1, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return -1, unix.ESRCH
}

package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The command gives up, before it runs, everything its launcher holds
// that it could use against the machine or the launcher itself. Go runs
// nothing between fork and exec, so the shell is started from an OS
// thread of its own that first takes on what the command must run with:
// no capability in any set (as root too), a fresh session keyring, a
// Landlock domain nested below the launcher's, and a seccomp filter
// against set-user-ID and set-group-ID bits and device nodes
// (privfilter.go). Credentials, keyrings, Landlock domains and seccomp
// filters are a thread's own, and a child is made from the thread that
// forks it: the shell inherits them all, the launcher's other threads
// keep what they had, and the thread ends with its goroutine, so nothing
// else of the launcher ever runs on it.

// startLockedDown starts cmd from a fresh OS thread locked down as
// [lockDownThread] says, after the thread has joined the cgroup v1
// directories whose tasks files are joins.
func startLockedDown(cmd *exec.Cmd, p Plan, joins []*os.File) error {
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine.
		runtime.LockOSThread()
		if err := joinCgroups(joins); err != nil {
			done <- err
			return
		}
		if err := lockDownThread(p); err != nil {
			done <- err
			return
		}
		err := cmd.Start()
		done <- err
		if err == nil && p.Guard != nil {
			// The thread stays, in the command's own Landlock domain,
			// to resolve its paths for the supervisor (fsguard_linux.go).
			serveResolver()
		}
	}()
	return <-done
}

// lockDownThread takes away from the calling thread what the command
// must not inherit. It is called on a thread that ends after forking.
func lockDownThread(p Plan) error {
	if err := freshSessionKeyring(); err != nil {
		return err
	}
	if p.Landlock {
		if err := nestLandlock(); err != nil {
			return fmt.Errorf("nested Landlock domain: %w", err)
		}
	}
	if err := restrictPrivileges(); err != nil {
		return fmt.Errorf("refusing set-user-ID bits and device nodes: %w", err)
	}
	if p.Guard != nil {
		if err := superviseFiles(p); err != nil {
			return fmt.Errorf("the supervisor of creating calls: %w", err)
		}
	} else if p.Supervised {
		if err := superviseSockets(p.ProxyFD); err != nil {
			return fmt.Errorf("the supervised socket filter: %w", err)
		}
	}
	if nestedUserNS(p) {
		// The shell's user namespace gives it a credential of its own:
		// no capability over anything outside it, and, running as a user
		// other than its root, none at all once it execs. Mapping the
		// launcher's root into it needs CAP_SETFCAP here, so nothing is
		// dropped on this thread.
		return nil
	}
	return dropCapabilities()
}

// nestedUserNS reports whether the shell runs in a user namespace nested
// in the launcher's: with the namespaces layer, unless the command runs
// as root, whose shell stays in the launcher's namespace without a
// capability (a nested one would give its root every capability there).
func nestedUserNS(p Plan) bool { return p.Namespaces && p.UID != 0 }

// freshSessionKeyring gives the thread a new, empty session keyring in
// place of the server's, whose keys (a login's credentials, a kerberos
// ticket) the command would otherwise reach. Where keyctl is refused (a
// container's seccomp profile often does) the command cannot reach a
// keyring either.
func freshSessionKeyring() error {
	_, _, errno := unix.Syscall6(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0, 0)
	switch {
	case errno == 0, errno == unix.ENOSYS, errno == unix.EPERM, errno == unix.EACCES:
		return nil
	case errno == unix.EDQUOT:
		return errors.New("a fresh session keyring: the user's key quota is full (kernel.keys.maxkeys)")
	}
	return fmt.Errorf("a fresh session keyring: %w", errno)
}

// nestLandlock puts the thread in a Landlock domain of its own, below
// the launcher's: the command then cannot ptrace its launcher (nor read
// its /proc/PID/fd, environ or mem, which need the same access), and
// with ABI 6+ cannot signal it (SIGKILL, SIGSTOP) nor reach an abstract
// unix socket outside the domain. The launcher's own domain does not
// scope signals, so that every thread of it can still signal the command.
// The domain also refuses making character and block devices anywhere.
func nestLandlock() error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return err
	}
	attr := llsys.RulesetAttr{HandledAccessFS: llsys.AccessFSMakeChar | llsys.AccessFSMakeBlock}
	if abi >= 6 {
		attr.Scoped = llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return llsys.LandlockRestrictSelf(fd, 0)
}

// Secure bits (linux/securebits.h): exec as uid 0 grants no capability,
// the set-user-ID fix-up and keep-caps stay as they are, ambient
// capabilities cannot be raised; each locked.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
	lockedSecureBits              = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropCapabilities empties the thread's capability sets: bounding,
// ambient, inheritable, permitted and effective. A thread that may change
// its secure bits and bounding set (CAP_SETPCAP: root, or the launcher in
// its user namespace) also locks exec as uid 0 out of capabilities and
// empties the bounding set, so no exec regains one; one that may not
// holds no capability to begin with, and no_new_privs keeps a
// set-user-ID or file-capability program from granting one.
func dropCapabilities() error {
	caps, err := capabilities()
	if err != nil {
		return err
	}
	if caps[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, lockedSecureBits, 0, 0, 0); err != nil {
			return fmt.Errorf("locking the secure bits: %w", err)
		}
		// Capabilities the kernel does not know fail with EINVAL.
		for c := 0; c < 64; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("dropping the capabilities: %w", err)
	}
	if caps, err = capabilities(); err != nil {
		return err
	}
	for _, c := range caps {
		if c.Effective|c.Permitted|c.Inheritable != 0 {
			return fmt.Errorf("capabilities left after dropping them: %+v", caps)
		}
	}
	return nil
}

// capabilities are the calling thread's capability sets.
func capabilities() ([2]unix.CapUserData, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return data, fmt.Errorf("reading the capabilities: %w", err)
	}
	return data, nil
}

// Undumpable marks this process not dumpable: no core file, and its
// /proc/PID entries (fd, environ, mem, maps) then belong to root and
// need CAP_SYS_PTRACE to open, even for a process of the same user, so a
// command can neither ptrace it nor reach its descriptors and
// environment.
func Undumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// restrictPrivileges installs the privilege filter (privfilter.go) on the
// calling thread. Where no filter is built for the architecture nothing
// is installed.
func restrictPrivileges() error {
	sets := privArchSyscalls()
	if sets == nil {
		return nil
	}
	ins, err := privilegeFilter(sets)
	if err != nil {
		return err
	}
	return installSeccomp(ins, 0)
}

// superviseSockets installs the supervised socket filter (seccomp.go) on
// the calling thread, with a listener, and sends the listener to the
// server over fd; nothing of the command ever holds it.
func superviseSockets(fd int) error {
	sets := archSyscalls()
	if sets == nil {
		return errors.New("no socket filter is built for this architecture")
	}
	ins, err := supervisedFilter(sets)
	if err != nil {
		return err
	}
	r, err := setSeccompFilter(ins, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	if err != nil {
		return err
	}
	listener := int(r)
	defer unix.Close(listener)
	if err := unix.Sendmsg(fd, []byte{RelayListener}, unix.UnixRights(listener), nil, 0); err != nil {
		return fmt.Errorf("sending the listener to the server: %w", err)
	}
	return nil
}

// installSeccomp installs ins as a seccomp filter, with flags
// (SECCOMP_FILTER_FLAG_TSYNC: on every thread; 0: on the calling thread).
func installSeccomp(ins []bpf.Instruction, flags uintptr) error {
	r, err := setSeccompFilter(ins, flags)
	if err == nil && r != 0 {
		return fmt.Errorf("seccomp: thread %d could not take the filter", r)
	}
	return err
}

// setSeccompFilter assembles ins and installs it as a seccomp filter with
// flags: the one place the launcher makes the system call. It returns
// what the call does: with SECCOMP_FILTER_FLAG_NEW_LISTENER the
// listener's descriptor, with SECCOMP_FILTER_FLAG_TSYNC the thread that
// could not take the filter (0: none).
func setSeccompFilter(ins []bpf.Instruction, flags uintptr) (uintptr, error) {
	raw, err := bpf.Assemble(ins)
	if err != nil {
		return 0, err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return 0, fmt.Errorf("seccomp: %w", errno)
	}
	return r, nil
}

// closeStrayFiles keeps from the command every descriptor init did not
// get from the server on purpose: the server passes on, without knowing
// of them, the descriptors whoever started it left open (a host, a
// script, a service manager), and one of them could be a directory
// outside every writable root, through which a write goes by the mount
// it was opened on, never remounted read-only (or a socket to something
// outside). Init's own are 3 (the status), p.ServerFD, the shell's files
// after it and p.ProxyFD; everything above them closes on exec.
func closeStrayFiles(p Plan) {
	last := max(3, p.ServerFD+p.ShellFiles, p.ProxyFD)
	if unix.CloseRange(uint(last+1), ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > last {
			unix.CloseOnExec(n)
		}
	}
}

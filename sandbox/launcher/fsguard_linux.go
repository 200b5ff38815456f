package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervisor of creating calls. The thread that starts the shell
// installs a filter (fsfilter.go) that sends every call that may create or
// change a name (open for writing, mkdir, rename, link, symlink, mknod,
// truncate) to a goroutine of init's own, on a thread of its own. It reads
// the path from the caller's memory once, resolves it the way the kernel
// would for the caller (its working directory, its descriptor for a
// directory, its root; links one component at a time, /proc/self as the
// caller's), judges where it lands against the protected names
// (protect.Names.Sandboxed, the one predicate the Write and Edit tools
// use) beneath the writable roots, and then performs the call itself,
// relative to the directory it resolved, on the name it judged: a command
// that changes the path in its memory after the judgement (another
// thread) changes nothing, and no call is ever let through to run on what
// the caller's memory says then (SECCOMP_USER_NOTIF_FLAG_CONTINUE is never
// used here). An open's descriptor is installed in the caller
// (SECCOMP_IOCTL_NOTIF_ADDFD); a refused call fails with EACCES and a line
// on the command's standard error names the protected name.
//
// The supervisor acts with the command's own confinement: it is init,
// in the command's mount namespace (the read-only binds hold) and, with
// Landlock, in the launcher's domain, the one the command's own is nested
// in (it adds only signal and socket scopes and device nodes, which the
// supervisor refuses too); its thread keeps no capability but
// CAP_SYS_PTRACE (to read the caller's memory and descriptors), so the
// files' permissions judge it as the command's user, and it takes the
// caller's umask for each call (the thread's own file system context,
// unshared).

// The open_how.resolve flags (linux/openat2.h).
const (
	resolveNoXdev       = 0x01
	resolveNoMagiclinks = 0x02
	resolveNoSymlinks   = 0x04
	resolveBeneath      = 0x08
	resolveInRoot       = 0x10
)

// procSuperMagic is procfs's f_type.
const procSuperMagic = 0x9fa0

// maxLinks is how many links one resolution follows (the kernel's 40).
const maxLinks = 40

// maxToldFiles bounds the refusals said on the command's standard error.
const maxToldFiles = 64

// devIno names a directory.
type devIno struct{ dev, ino uint64 }

// fileSupervisor answers one command's creating calls.
type fileSupervisor struct {
	fd      int // the filter's listener
	guard   *Guard
	initPid int
	compat  uint32 // the compatibility architecture, 0 for none
	// gitDirs are the .git directories this command made (mkdir): a
	// repository of its own, whose config and hooks it may write (git
	// init); the server's guard of repositories (package sandbox, git.go)
	// moves those aside once the command ends.
	gitDirs map[devIno]bool
	mu      sync.Mutex // gitDirs, told
	told    map[string]bool
	umask   int
	// toResolver hands notifications to the thread that started the
	// shell (serveResolver); resolving is set once it serves.
	toResolver chan resolveReq
	resolving  atomic.Bool
	// forward, when not nil, takes the notifications that are not
	// creating calls (the supervised socket mode's, answered by the
	// server).
	forward func(n *SeccompNotif)
}

// superviseFiles installs the creating calls' filter on the calling
// thread (the one that starts the shell), with a listener that a
// supervisor in init answers. In the supervised socket mode the one filter
// sends the socket calls too (a thread's filters may have one listener
// among them): the listener goes to the server as superviseSockets sends
// it, and the supervisor forwards those notifications to the server over
// the same socket ([RelayNotification]), which answers them on its copy.
func superviseFiles(p Plan) error {
	files := fileSyscalls()
	if files == nil {
		return errors.New("no filter of creating calls is built for this architecture")
	}
	var sets []syscallSet
	if p.Supervised {
		if sets = archSyscalls(); sets == nil {
			return errors.New("no socket filter is built for this architecture")
		}
	}
	ins, err := notifyFilter(sets, files, p.Supervised)
	if err != nil {
		return err
	}
	// Once the supervisor has taken a call, the caller waits for the
	// answer through any signal but a fatal one (Linux 5.19+): a call the
	// supervisor made must not be interrupted and made again on restart
	// (a second mkdir would fail with EEXIST).
	r, err := setSeccompFilter(ins, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	if err != nil {
		r, err = setSeccompFilter(ins, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	}
	if err != nil {
		return err
	}
	listener := int(r)
	var forward func(*SeccompNotif)
	if p.Supervised {
		if err := unix.Sendmsg(p.ProxyFD, []byte{RelayListener}, unix.UnixRights(listener), nil, 0); err != nil {
			unix.Close(listener)
			return fmt.Errorf("sending the listener to the server: %w", err)
		}
		fd := p.ProxyFD
		forward = func(n *SeccompNotif) {
			msg := append([]byte{RelayNotification}, unsafe.Slice((*byte)(unsafe.Pointer(n)), unsafe.Sizeof(*n))...)
			// A lost message leaves the caller waiting until it is
			// killed: the server answers every one it reads.
			_ = unix.Sendmsg(fd, msg, nil, nil, 0)
		}
	}
	startFileSupervisor(listener, p.Guard, forward)
	return nil
}

// startFileSupervisor answers the notifications of listener (the
// creating-call filter's) in a goroutine of its own, on a thread it keeps.
func startFileSupervisor(listener int, g *Guard, forward func(*SeccompNotif)) {
	s := &fileSupervisor{fd: listener, guard: g, initPid: os.Getpid(), gitDirs: map[devIno]bool{},
		told: map[string]bool{}, umask: -1, forward: forward, toResolver: make(chan resolveReq)}
	supervisorOfShell = s
	if sets := fileSyscalls(); len(sets) > 1 {
		s.compat = sets[1].arch
	}
	go s.run()
}

// run takes the supervisor's thread for good (it never serves another
// goroutine: its capabilities and file system context are its own) and
// answers notifications until init ends. Each is resolved and judged by
// the thread that started the shell (serveResolver): it is in the
// command's own Landlock domain, and a domain may inspect (read the
// memory of, take a descriptor from) only the processes of its own
// domain or one nested in it, while init's threads are each in a domain
// of their own before Landlock ABI 8. The call is then made here, on a
// thread that holds none of the filters the command's calls go through.
// Until that thread serves, the notifications are its own (the maps of
// the shell's user namespace it writes as it starts the shell): they are
// read from here (the same process) and answered here.
func (s *fileSupervisor) run() {
	runtime.LockOSThread()
	broken := s.ownThread()
	if broken != nil {
		// Every creating call then fails: nothing is performed with more
		// than the command's rights.
		fmt.Fprintf(os.Stderr, "agent-mcp sandbox: the supervisor of creating calls: %v\n", broken)
	}
	reply := make(chan prepared, 1)
	for {
		var n SeccompNotif
		if _, err := SeccompIoctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOENT) {
				continue
			}
			return
		}
		if fileCall(n.Data.Arch, n.Data.Nr) == "" && s.forward != nil {
			s.forward(&n)
			continue
		}
		var resp SeccompResp
		switch {
		case broken != nil:
			resp = SeccompResp{ID: n.ID, Error: -int32(unix.EACCES)}
		case !s.resolving.Load() && s.fromInit(int(n.Pid)):
			r := s.prepare(&n)
			resp = answer(&n, r.act, r.err)
		default:
			s.toResolver <- resolveReq{n: &n, reply: reply}
			r := <-reply
			if r.wait && r.err == nil {
				// An open that waits for the other end (a fifo's) is made
				// apart: the calls that would open that end must not wait
				// behind it.
				go s.answerApart(&n, r.act)
				continue
			}
			resp = answer(&n, r.act, r.err)
		}
		// ENOENT: the caller is gone (killed); nothing to answer.
		_, _ = SeccompIoctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	}
}

// resolveReq is a notification handed to the resolving thread, and where
// it answers.
type resolveReq struct {
	n     *SeccompNotif
	reply chan prepared
}

// prepared is the resolving thread's answer: how to make the call, or
// why not; wait when making it may wait for another process (a fifo's
// other end).
type prepared struct {
	act  perform
	err  error
	wait bool
}

// answerApart makes a call that may wait on a thread of its own, holding
// no more than the supervisor's, and answers it.
func (s *fileSupervisor) answerApart(n *SeccompNotif, act perform) {
	// Never unlocked: the thread ends with this goroutine.
	runtime.LockOSThread()
	resp := SeccompResp{ID: n.ID, Error: -int32(unix.EACCES)}
	if dropToPtrace() == nil {
		resp = answer(n, act, nil)
	}
	_, _ = SeccompIoctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// fromInit reports whether the task tid is one of init's own threads.
func (s *fileSupervisor) fromInit(tid int) bool {
	tgid, err := threadGroup(tid)
	return err == nil && tgid == s.initPid
}

// supervisorOfShell is the supervisor whose filter the thread that starts
// the shell installed (superviseFiles), for serveResolver.
var supervisorOfShell *fileSupervisor

// serveResolver is called by the thread that started the shell once it
// has: when a supervisor of creating calls holds the command, the thread
// resolves and judges each notification for it (run), until init ends.
// Its own calls (O_PATH opens, links read, the caller's memory read) are
// none its filter sends.
func serveResolver() {
	s := supervisorOfShell
	if s == nil {
		return
	}
	s.resolving.Store(true)
	for req := range s.toResolver {
		req.reply <- s.prepare(req.n)
	}
}

// ownThread gives the thread a file system context of its own (for the
// caller's umask) and drops every capability but CAP_SYS_PTRACE.
func (s *fileSupervisor) ownThread() error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("a file system context of its own: %w", err)
	}
	s.umask = unix.Umask(0o022)
	unix.Umask(s.umask)
	return dropToPtrace()
}

// dropToPtrace drops every capability of the calling thread but
// CAP_SYS_PTRACE.
func dropToPtrace() error {
	caps, err := capabilities()
	if err != nil {
		return err
	}
	keep := uint32(1) << unix.CAP_SYS_PTRACE
	caps[0].Effective &= keep
	caps[0].Permitted &= keep
	caps[0].Inheritable = 0
	caps[1] = unix.CapUserData{}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("dropping the capabilities: %w", err)
	}
	return nil
}

// addGitDir remembers a .git directory the command made.
func (s *fileSupervisor) addGitDir(d devIno) {
	s.mu.Lock()
	s.gitDirs[d] = true
	s.mu.Unlock()
}

// isGitDir reports whether the command made the .git directory d.
func (s *fileSupervisor) isGitDir(d devIno) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gitDirs[d]
}

// errno is the answer's error for err (EACCES for one that is not an
// errno).
func errno(err error) int32 {
	var e unix.Errno
	if !errors.As(err, &e) {
		e = unix.EACCES
	}
	return -int32(e)
}

// answer performs a creating call prepared by prepare (err: refused
// or failed before).
func answer(n *SeccompNotif, act perform, err error) SeccompResp {
	resp := SeccompResp{ID: n.ID}
	if err == nil {
		resp.Val, err = act()
	}
	if err != nil {
		resp.Val, resp.Error = 0, errno(err)
	}
	return resp
}

// prepare resolves and judges n's call and returns how to make it.
func (s *fileSupervisor) prepare(n *SeccompNotif) prepared {
	c := &caller{s: s, n: n, tid: int(n.Pid), root: -1}
	defer c.close()
	act, err := c.prepare()
	return prepared{act: act, err: err, wait: c.waits}
}

// prepare resolves and judges the caller's call and returns how to make
// it.
func (c *caller) prepare() (perform, error) {
	n, s := c.n, c.s
	a := n.Data.Args
	fdArg := func(i int) int32 { return int32(uint32(a[i])) }
	switch fileCall(n.Data.Arch, n.Data.Nr) {
	case "open":
		return c.open(unix.AT_FDCWD, a[0], int(int32(a[1])), uint32(a[2]), 0, false)
	case "creat":
		return c.open(unix.AT_FDCWD, a[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, uint32(a[1]), 0, false)
	case "openat":
		return c.open(fdArg(0), a[1], int(int32(a[2])), uint32(a[3]), 0, false)
	case "openat2":
		how, err := c.openHow(a[2], a[3])
		if err != nil {
			return nil, err
		}
		return c.open(fdArg(0), a[1], int(how.Flags), uint32(how.Mode), how.Resolve, true)
	case "mkdir":
		return c.mkdir(unix.AT_FDCWD, a[0], uint32(a[1]))
	case "mkdirat":
		return c.mkdir(fdArg(0), a[1], uint32(a[2]))
	case "mknod":
		return c.mknod(unix.AT_FDCWD, a[0], uint32(a[1]), a[2])
	case "mknodat":
		return c.mknod(fdArg(0), a[1], uint32(a[2]), a[3])
	case "rename":
		return c.rename(unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], 0)
	case "renameat":
		return c.rename(fdArg(0), a[1], fdArg(2), a[3], 0)
	case "renameat2":
		return c.rename(fdArg(0), a[1], fdArg(2), a[3], uint(a[4]))
	case "link":
		return c.link(unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], 0)
	case "linkat":
		return c.link(fdArg(0), a[1], fdArg(2), a[3], int(int32(a[4])))
	case "symlink":
		return c.symlink(a[0], unix.AT_FDCWD, a[1])
	case "symlinkat":
		return c.symlink(a[0], fdArg(1), a[2])
	case "truncate":
		length := int64(a[1])
		if n.Data.Arch == s.compat {
			length = int64(int32(uint32(a[1])))
		}
		return c.truncate(a[0], length)
	case "bind":
		return c.bind(fdArg(0), a[1], int(int32(a[2])))
	}
	return nil, unix.ENOSYS
}

// caller is one notification's caller, as the supervisor resolves its
// paths.
type caller struct {
	s    *fileSupervisor
	n    *SeccompNotif
	tid  int
	root int // its root directory, opened when first needed
	// rootPath is the root's path as init sees it.
	rootPath string
	// waits is set when making the call may wait for another process.
	waits bool
}

func (c *caller) close() {
	if c.root >= 0 {
		unix.Close(c.root)
	}
}

// valid reports whether the caller still waits for this answer.
func (c *caller) valid() bool { return NotifValid(c.s.fd, c.n.ID) }

// read copies size bytes at addr from the caller's memory.
func (c *caller) read(addr uint64, size int) ([]byte, error) {
	buf := make([]byte, size)
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(size)
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: size}}
	got, err := unix.ProcessVMReadv(c.tid, local, remote, 0)
	if errors.Is(err, unix.EPERM) {
		// A process that made itself undumpable, where the resolving
		// thread holds no capability over it.
		return nil, unix.EACCES
	}
	if err != nil {
		return nil, unix.EFAULT
	}
	return buf[:got], nil
}

// path reads the NUL-terminated path at addr from the caller's memory,
// once: what is judged and performed is this copy.
func (c *caller) path(addr uint64) (string, error) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	var out []byte
	for len(out) < unix.PathMax {
		// Up to the end of the page, so that a path ending just before
		// an unmapped page is read whole.
		chunk := 4096 - int(addr%4096)
		b, err := c.read(addr, chunk)
		if err != nil || len(b) == 0 {
			return "", unix.EFAULT
		}
		if i := strings.IndexByte(string(b), 0); i >= 0 {
			out = append(out, b[:i]...)
			if !c.valid() {
				return "", unix.EACCES
			}
			if len(out) == 0 {
				return "", unix.ENOENT
			}
			return string(out), nil
		}
		out = append(out, b...)
		addr += uint64(len(b))
	}
	return "", unix.ENAMETOOLONG
}

// openHow reads openat2's struct open_how.
func (c *caller) openHow(addr, size uint64) (unix.OpenHow, error) {
	var how unix.OpenHow
	if size < uint64(unsafe.Sizeof(how)) {
		return how, unix.EINVAL
	}
	b, err := c.read(addr, int(unsafe.Sizeof(how)))
	if err != nil || len(b) != int(unsafe.Sizeof(how)) {
		return how, unix.EFAULT
	}
	how = *(*unix.OpenHow)(unsafe.Pointer(&b[0]))
	return how, nil
}

// place is where a path resolved: the directory that holds its last
// component (an O_PATH descriptor, and its path as init sees it) and that
// component. magic is set when the last component is a link of /proc
// (a descriptor's, a working directory's) to follow: target is where it
// leads, when that is a path.
type place struct {
	dir     int
	dirPath string
	name    string
	magic   bool
	target  string
	// pinned (with hasPin) is what a magic link leads to, opened O_PATH
	// by the resolving thread (caller.pin).
	pinned int
	hasPin bool
}

// close closes p's descriptors.
func (p place) close() {
	if p.dir >= 0 {
		unix.Close(p.dir)
	}
	if p.hasPin {
		unix.Close(p.pinned)
	}
}

// perform makes a judged call: its result.
type perform func() (int64, error)

// path is where p names: the magic link's target, else the directory's
// path and the name.
func (p place) path() string {
	if p.magic {
		return p.target
	}
	return filepath.Join(p.dirPath, strings.TrimSuffix(p.name, "/"))
}

// walk is how a path is resolved: openat2's resolve flags.
type walk struct {
	noSymlinks, noMagic, beneath, inRoot bool
}

// start opens where a path relative to dirfd starts: the caller's root
// for an absolute one, its working directory for AT_FDCWD, else a copy
// of its descriptor; with the start's path.
func (c *caller) start(dirfd int32, abs bool, w walk) (int, string, error) {
	if abs && !w.inRoot {
		if w.beneath {
			return -1, "", unix.EXDEV
		}
		return c.openRoot()
	}
	if dirfd == unix.AT_FDCWD {
		proc := fmt.Sprintf("/proc/%d/cwd", c.tid)
		fd, err := unix.Open(proc, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, "", unix.EACCES
		}
		p, err := os.Readlink(proc)
		if err != nil || !c.valid() {
			unix.Close(fd)
			return -1, "", unix.EACCES
		}
		return fd, p, nil
	}
	pidfd, err := TaskPidfd(c.tid)
	if err != nil {
		return -1, "", unix.EACCES
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, int(dirfd), 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return -1, "", unix.EBADF
		}
		return -1, "", unix.EACCES
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return -1, "", unix.ENOTDIR
	}
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil || !c.valid() {
		unix.Close(fd)
		return -1, "", unix.EACCES
	}
	return fd, p, nil
}

// openRoot is a new descriptor of the caller's root, with its path.
func (c *caller) openRoot() (int, string, error) {
	if c.root < 0 {
		proc := fmt.Sprintf("/proc/%d/root", c.tid)
		fd, err := unix.Open(proc, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, "", unix.EACCES
		}
		p, err := os.Readlink(proc)
		if err != nil || !c.valid() {
			unix.Close(fd)
			return -1, "", unix.EACCES
		}
		c.root, c.rootPath = fd, p
	}
	fd, err := unix.Dup(c.root)
	if err != nil {
		return -1, "", err
	}
	unix.CloseOnExec(fd)
	return fd, c.rootPath, nil
}

// resolve resolves path relative to dirfd as the kernel would for the
// caller, one component at a time, following a link in the last
// component when follow is set.
func (c *caller) resolve(dirfd int32, path string, follow bool, w walk) (place, error) {
	cur, curPath, err := c.start(dirfd, strings.HasPrefix(path, "/"), w)
	if err != nil {
		return place{dir: -1}, err
	}
	if !strings.HasPrefix(curPath, "/") || strings.HasSuffix(curPath, " (deleted)") {
		unix.Close(cur)
		return place{dir: -1}, unix.ENOENT
	}
	ws := &walkState{cur: cur, path: curPath, comps: components(path)}
	if w.beneath || w.inRoot {
		ws.top = curPath
	}
	p, err := c.walk(ws, follow, w)
	if err != nil {
		unix.Close(ws.cur)
		return place{dir: -1}, err
	}
	return p, nil
}

// walkState is a resolution under way: the directory reached (cur, at
// path), what .. does not climb above (top: the caller's root, or the
// start with RESOLVE_BENEATH and RESOLVE_IN_ROOT; "" until known), the
// components left from i, and the links followed.
type walkState struct {
	cur       int
	path, top string
	comps     []string
	i, links  int
}

// walk resolves ws's components; on an error ws.cur is still open.
func (c *caller) walk(ws *walkState, follow bool, w walk) (place, error) {
	for ws.i = 0; ws.i < len(ws.comps); ws.i++ {
		comp, last := ws.comps[ws.i], ws.i == len(ws.comps)-1
		switch {
		case comp == "..":
			if err := c.dotdot(ws, w); err != nil {
				return place{}, err
			}
			if last {
				ws.comps = append(ws.comps, ".")
			}
			continue
		case last && (comp == "." || !follow):
			return place{dir: ws.cur, dirPath: ws.path, name: comp}, nil
		case comp == ".":
			continue
		}
		if !last {
			if err := c.mayEnter(ws.cur, comp); err != nil {
				return place{}, err
			}
			next, err := unix.Openat(ws.cur, comp, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err == nil {
				unix.Close(ws.cur)
				ws.cur, ws.path = next, filepath.Join(ws.path, comp)
				continue
			}
			if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
				return place{}, err
			}
		}
		target, lerr := readlinkat(ws.cur, comp)
		if lerr != nil {
			if last {
				return place{dir: ws.cur, dirPath: ws.path, name: comp}, nil
			}
			return place{}, unix.ENOTDIR
		}
		if p, done, err := c.throughLink(ws, w, comp, target, last); err != nil || done {
			return p, err
		}
	}
	return place{dir: ws.cur, dirPath: ws.path, name: "."}, nil
}

// dotdot climbs to the parent directory, never above ws.top.
func (c *caller) dotdot(ws *walkState, w walk) error {
	if ws.top == "" {
		if _, _, err := c.openRoot(); err != nil {
			return err
		}
		ws.top = c.rootPath
	}
	if ws.path == ws.top || ws.path == "/" {
		if w.beneath {
			return unix.EXDEV
		}
		return nil
	}
	up, err := unix.Openat(ws.cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	unix.Close(ws.cur)
	ws.cur, ws.path = up, filepath.Dir(ws.path)
	return nil
}

// throughLink goes through the link comp (leading to target) in ws.cur: /proc's
// self and thread-self as the caller's, another link of /proc (a
// descriptor's, a working directory's) by opening it, or a plain link by
// its target's components. done, with the place, when the link is the
// last component and is /proc's: the call follows it itself.
func (c *caller) throughLink(ws *walkState, w walk, comp, target string, last bool) (place, bool, error) {
	splice := func(rest []string) {
		ws.comps = append(append(ws.comps[:ws.i:ws.i], rest...), ws.comps[ws.i+1:]...)
		ws.i--
	}
	if isProc(ws.cur) {
		if rest, ok := c.procSelf(ws.cur, comp); ok {
			splice(rest)
			return place{}, false, nil
		}
		if w.noMagic {
			return place{}, false, unix.ELOOP
		}
		if last {
			return place{dir: ws.cur, dirPath: ws.path, name: comp, magic: true, target: target}, true, nil
		}
		next, err := unix.Openat(ws.cur, comp, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return place{}, false, err
		}
		if !strings.HasPrefix(target, "/") || strings.HasSuffix(target, " (deleted)") {
			unix.Close(next)
			return place{}, false, unix.ENOENT
		}
		unix.Close(ws.cur)
		ws.cur, ws.path = next, filepath.Clean(target)
		return place{}, false, nil
	}
	if w.noSymlinks {
		return place{}, false, unix.ELOOP
	}
	if ws.links++; ws.links > maxLinks {
		return place{}, false, unix.ELOOP
	}
	if strings.HasPrefix(target, "/") {
		if w.beneath || w.inRoot {
			// RESOLVE_IN_ROOT would start again at the start: not
			// followed here (refused, as RESOLVE_BENEATH does).
			return place{}, false, unix.EXDEV
		}
		root, rootPath, err := c.openRoot()
		if err != nil {
			return place{}, false, err
		}
		unix.Close(ws.cur)
		ws.cur, ws.path, ws.top = root, rootPath, rootPath
	}
	rest := components(target)
	if len(rest) == 0 {
		rest = []string{"."}
	}
	splice(rest)
	return place{}, false, nil
}

// components splits a path into its names, without empty ones; "/" and
// "" have none. A trailing slash stays on the last name ("dir/"): the
// call is made with it, and the kernel applies its rules (mkdir takes it,
// an open that creates fails with EISDIR).
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	if strings.HasSuffix(p, "/") && len(out) > 0 && out[len(out)-1] != "." && out[len(out)-1] != ".." {
		out[len(out)-1] += "/"
	}
	return out
}

// procSelf reads /proc/self and /proc/thread-self as the caller's: the
// names that replace comp in the procfs root dir, and whether it was one.
func (c *caller) procSelf(dir int, comp string) ([]string, bool) {
	if comp != "self" && comp != "thread-self" || !isProcRoot(dir) {
		return nil, false
	}
	tgid, err := threadGroup(c.tid)
	if err != nil {
		tgid = c.tid
	}
	if comp == "self" {
		return []string{strconv.Itoa(tgid)}, true
	}
	return []string{strconv.Itoa(tgid), "task", strconv.Itoa(c.tid)}, true
}

// mayEnter refuses entering init's own directory in /proc: the command
// cannot (init is not dumpable), and the supervisor would reach its own
// descriptors.
func (c *caller) mayEnter(dir int, comp string) error {
	n, err := strconv.Atoi(comp)
	if err != nil || !isProcRoot(dir) {
		return nil
	}
	if n == c.s.initPid {
		return unix.EACCES
	}
	if tgid, err := threadGroup(n); err == nil && tgid == c.s.initPid {
		return unix.EACCES
	}
	return nil
}

// isProc reports whether the directory fd is in a procfs.
func isProc(fd int) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(fd, &st) == nil && st.Type == procSuperMagic
}

// isProcRoot reports whether the directory fd is a procfs's root.
func isProcRoot(fd int) bool {
	var st unix.Stat_t
	return isProc(fd) && unix.Fstat(fd, &st) == nil && st.Ino == 1
}

// readlinkat reads the link name in dir.
func readlinkat(dir int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// FileGuardSupport says why the supervisor of creating calls cannot run
// here, or nil: it needs the filter for the architecture, and of the
// kernel what [SupervisorSupport] needs (seccomp user notification with
// SECCOMP_IOCTL_NOTIF_ADDFD, Linux 5.9+, and pidfd_getfd).
func FileGuardSupport() error {
	if fileSyscalls() == nil {
		return errors.New("no filter of creating calls is built for this architecture")
	}
	return SupervisorSupport()
}

package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The creating calls as the supervisor performs them (fsguard_linux.go):
// each resolves its paths, judges where they land and makes the call on
// the directory it resolved, with the name it judged.

// open performs open, openat, creat and openat2 (two): the descriptor's
// number in the caller.
func (c *caller) open(dirfd int32, addr uint64, flags int, mode uint32, resolve uint64, two bool) (perform, error) {
	path, err := c.path(addr)
	if err != nil {
		return nil, err
	}
	w := walk{noSymlinks: resolve&resolveNoSymlinks != 0, noMagic: resolve&resolveNoMagiclinks != 0,
		beneath: resolve&resolveBeneath != 0, inRoot: resolve&resolveInRoot != 0}
	follow := flags&unix.O_NOFOLLOW == 0 && (flags&unix.O_CREAT == 0 || flags&unix.O_EXCL == 0)
	p, err := c.resolve(dirfd, path, follow, w)
	if err != nil {
		return nil, err
	}
	if _, err := c.judge(p, false); err != nil {
		unix.Close(p.dir)
		return nil, err
	}
	if err := c.pin(&p); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if flags&unix.O_NONBLOCK == 0 && !p.magic &&
		unix.Fstatat(p.dir, strings.TrimSuffix(p.name, "/"), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
		c.waits = true
	}
	s, id, tid := c.s, c.n.ID, c.tid
	return func() (int64, error) {
		defer p.close()
		if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
			s.takeUmask(tid)
		}
		fl := flags | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NOFOLLOW
		var fd int
		var err error
		switch {
		case p.hasPin:
			fd, err = unix.Open(fmt.Sprintf("/proc/self/fd/%d", p.pinned), fl&^unix.O_NOFOLLOW, 0)
		case p.dirPath == "/dev" && p.name == "tty":
			// The caller's controlling terminal, not the supervisor's
			// (it has none).
			fd, err = openTerminal(tid, fl)
		case idMap(p):
			fd, err = openIDMap(p, fl)
		case two:
			fd, err = unix.Openat2(p.dir, p.name, &unix.OpenHow{Flags: uint64(fl), Mode: uint64(mode),
				Resolve: resolve &^ (resolveBeneath | resolveInRoot)})
		default:
			fd, err = unix.Openat(p.dir, p.name, fl, mode)
		}
		if err != nil {
			return 0, err
		}
		defer unix.Close(fd)
		add := SeccompAddfd{ID: id, Srcfd: uint32(fd)}
		if flags&unix.O_CLOEXEC != 0 {
			add.NewfdFlags = unix.O_CLOEXEC
		}
		r, err := SeccompIoctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add))
		return int64(r), err
	}, nil
}

// idMaps are the files of /proc whose writes the kernel judges by the
// capabilities of whoever opened them: a user namespace's maps, which the
// thread that starts the shell writes for the shell's namespace (os/exec).
var idMaps = []string{"uid_map", "gid_map", "setgroups", "projid_map"}

// idMap reports whether p is one of a process's idMaps.
func idMap(p place) bool {
	return !p.magic && slices.Contains(idMaps, p.name) && isProc(p.dir)
}

// openIDMap opens an idMap with init's own capabilities (another thread
// of init's than the supervisor's), as the thread that asked would have:
// a command holds none in the launcher's user namespace to map more than
// itself with, and init does not let it make another (Plan.AllowUserNS).
func openIDMap(p place, flags int) (int, error) {
	type result struct {
		fd  int
		err error
	}
	done := make(chan result, 1)
	go func() {
		fd, err := unix.Openat(p.dir, p.name, flags, 0)
		done <- result{fd, err}
	}()
	r := <-done
	return r.fd, r.err
}

// openTerminal opens the caller's controlling terminal (/dev/tty), where
// it is a pseudo-terminal (a background task's).
func openTerminal(tid, flags int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return -1, unix.ENXIO
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 5 {
		return -1, unix.ENXIO
	}
	nr, err := strconv.Atoi(f[4])
	if err != nil || nr == 0 {
		return -1, unix.ENXIO
	}
	major, minor := (nr>>8)&0xfff, (nr&0xff)|((nr>>12)&0xfff00)
	if major < 136 || major > 143 {
		return -1, unix.ENXIO
	}
	return unix.Open(fmt.Sprintf("/dev/pts/%d", (major-136)*256+minor), flags&^unix.O_NOFOLLOW, 0)
}

// mkdir performs mkdir and mkdirat.
func (c *caller) mkdir(dirfd int32, addr uint64, mode uint32) (perform, error) {
	p, err := c.one(dirfd, addr, false)
	if err != nil {
		return nil, err
	}
	gitDir, err := c.judge(p, true)
	if err != nil {
		unix.Close(p.dir)
		return nil, err
	}
	s, tid := c.s, c.tid
	return func() (int64, error) {
		defer p.close()
		s.takeUmask(tid)
		if err := unix.Mkdirat(p.dir, p.name, mode); err != nil {
			return 0, err
		}
		if gitDir {
			var st unix.Stat_t
			if unix.Fstatat(p.dir, p.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				s.addGitDir(devIno{st.Dev, st.Ino})
			}
		}
		return 0, nil
	}, nil
}

// one resolves the path at addr relative to dirfd, following a link in
// its last component when follow is set.
func (c *caller) one(dirfd int32, addr uint64, follow bool) (place, error) {
	path, err := c.path(addr)
	if err != nil {
		return place{dir: -1}, err
	}
	return c.resolve(dirfd, path, follow, walk{})
}

// mknod performs mknod and mknodat; device nodes are refused (the
// command's privilege filter refuses them too).
func (c *caller) mknod(dirfd int32, addr uint64, mode uint32, dev uint64) (perform, error) {
	if t := mode & unix.S_IFMT; t == unix.S_IFCHR || t == unix.S_IFBLK {
		return nil, unix.EPERM
	}
	p, err := c.one(dirfd, addr, false)
	if err != nil {
		return nil, err
	}
	if _, err := c.judge(p, false); err != nil {
		unix.Close(p.dir)
		return nil, err
	}
	s, tid := c.s, c.tid
	return func() (int64, error) {
		defer p.close()
		s.takeUmask(tid)
		return 0, unix.Mknodat(p.dir, p.name, mode, int(dev))
	}, nil
}

// rename performs rename, renameat and renameat2: both names are judged
// (a protected one is neither made nor moved away, and RENAME_EXCHANGE
// makes each the other).
func (c *caller) rename(olddir int32, oldAddr uint64, newdir int32, newAddr uint64, flags uint) (perform, error) {
	op, np, err := c.pair(olddir, oldAddr, false, newdir, newAddr)
	if err != nil {
		return nil, err
	}
	return func() (int64, error) {
		defer op.close()
		defer np.close()
		return 0, unix.Renameat2(op.dir, op.name, np.dir, np.name, flags)
	}, nil
}

// link performs link and linkat: the name linked to is judged too (a
// second name for a protected file would let it be written).
func (c *caller) link(olddir int32, oldAddr uint64, newdir int32, newAddr uint64, flags int) (perform, error) {
	if flags&unix.AT_EMPTY_PATH != 0 {
		if b, err := c.read(oldAddr, 1); err == nil && len(b) == 1 && b[0] == 0 {
			return c.linkDescriptor(olddir, newdir, newAddr)
		}
	}
	op, np, err := c.pair(olddir, oldAddr, flags&unix.AT_SYMLINK_FOLLOW != 0, newdir, newAddr)
	if err != nil {
		return nil, err
	}
	if err := c.pin(&op); err != nil {
		np.close()
		return nil, err
	}
	return func() (int64, error) {
		defer op.close()
		defer np.close()
		if op.hasPin {
			return 0, unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", op.pinned), np.dir, np.name, unix.AT_SYMLINK_FOLLOW)
		}
		return 0, unix.Linkat(op.dir, op.name, np.dir, np.name, 0)
	}, nil
}

// linkDescriptor performs linkat(fd, "", ..., AT_EMPTY_PATH): a name for
// the file the caller's descriptor fd is open on (an O_TMPFILE one).
func (c *caller) linkDescriptor(fd, newdir int32, newAddr uint64) (perform, error) {
	pidfd, err := TaskPidfd(c.tid)
	if err != nil {
		return nil, unix.EACCES
	}
	defer unix.Close(pidfd)
	own, err := unix.PidfdGetfd(pidfd, int(fd), 0)
	if err != nil {
		return nil, unix.EBADF
	}
	fail := func(err error) (perform, error) {
		unix.Close(own)
		return nil, err
	}
	target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", own))
	if err != nil {
		return fail(unix.EACCES)
	}
	if _, err := c.judge(place{magic: true, target: target}, false); err != nil {
		return fail(err)
	}
	np, err := c.one(newdir, newAddr, false)
	if err != nil {
		return fail(err)
	}
	if _, err := c.judge(np, false); err != nil {
		np.close()
		return fail(err)
	}
	return func() (int64, error) {
		defer unix.Close(own)
		defer np.close()
		return 0, unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", own), np.dir, np.name, unix.AT_SYMLINK_FOLLOW)
	}, nil
}

// pair resolves and judges the two paths of a rename or link.
func (c *caller) pair(olddir int32, oldAddr uint64, follow bool, newdir int32, newAddr uint64) (place, place, error) {
	oldPath, err := c.path(oldAddr)
	if err != nil {
		return place{}, place{}, err
	}
	newPath, err := c.path(newAddr)
	if err != nil {
		return place{}, place{}, err
	}
	op, err := c.resolve(olddir, oldPath, follow, walk{})
	if err != nil {
		return place{}, place{}, err
	}
	np, err := c.resolve(newdir, newPath, false, walk{})
	if err != nil {
		op.close()
		return place{}, place{}, err
	}
	for _, p := range []place{op, np} {
		if _, err := c.judge(p, false); err != nil {
			op.close()
			np.close()
			return place{}, place{}, err
		}
	}
	return op, np, nil
}

// symlink performs symlink and symlinkat: the link's own name is judged
// (where it points is judged when something is written through it).
func (c *caller) symlink(targetAddr uint64, newdir int32, newAddr uint64) (perform, error) {
	target, err := c.path(targetAddr)
	if err != nil {
		return nil, err
	}
	p, err := c.one(newdir, newAddr, false)
	if err != nil {
		return nil, err
	}
	if _, err := c.judge(p, false); err != nil {
		p.close()
		return nil, err
	}
	return func() (int64, error) {
		defer p.close()
		return 0, unix.Symlinkat(target, p.dir, p.name)
	}, nil
}

// truncate performs truncate(2): through a descriptor opened on what the
// path resolved to.
func (c *caller) truncate(addr uint64, length int64) (perform, error) {
	p, err := c.one(unix.AT_FDCWD, addr, true)
	if err != nil {
		return nil, err
	}
	if _, err := c.judge(p, false); err != nil {
		p.close()
		return nil, err
	}
	if err := c.pin(&p); err != nil {
		return nil, err
	}
	return func() (int64, error) {
		defer p.close()
		fl := unix.O_WRONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK
		var fd int
		var err error
		if p.hasPin {
			fd, err = unix.Open(fmt.Sprintf("/proc/self/fd/%d", p.pinned), fl, 0)
		} else {
			fd, err = unix.Openat(p.dir, p.name, fl|unix.O_NOFOLLOW, 0)
		}
		if err != nil {
			return 0, err
		}
		defer unix.Close(fd)
		return 0, unix.Ftruncate(fd, length)
	}, nil
}

// bind performs bind(2) on a copy of the caller's socket with a copy of
// the address: a unix socket's path is resolved and judged like any name
// made, and bound from the directory it resolved to (the supervisor's
// thread has a working directory of its own).
func (c *caller) bind(fd int32, addr uint64, size int) (perform, error) {
	if size < 2 || size > int(unsafe.Sizeof(unix.RawSockaddrAny{})) {
		return nil, unix.EINVAL
	}
	b, err := c.read(addr, size)
	if err != nil || len(b) != size {
		return nil, unix.EFAULT
	}
	pidfd, err := TaskPidfd(c.tid)
	if err != nil {
		return nil, unix.EACCES
	}
	defer unix.Close(pidfd)
	sock, err := unix.PidfdGetfd(pidfd, int(fd), 0)
	if err != nil {
		return nil, unix.EBADF
	}
	if !c.valid() {
		unix.Close(sock)
		return nil, unix.EACCES
	}
	raw := func(b []byte) error {
		_, _, e := unix.Syscall(unix.SYS_BIND, uintptr(sock), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e != 0 {
			return e
		}
		return nil
	}
	path := ""
	if *(*uint16)(unsafe.Pointer(&b[0])) == unix.AF_UNIX && size > 2 && b[2] != 0 {
		path = string(b[2:])
		if i := strings.IndexByte(path, 0); i >= 0 {
			path = path[:i]
		}
	}
	if path == "" {
		// Not a name on a file system: an internet address, an abstract
		// or an automatic unix one.
		return func() (int64, error) {
			defer unix.Close(sock)
			return 0, raw(b)
		}, nil
	}
	p, err := c.resolve(unix.AT_FDCWD, path, false, walk{})
	if err != nil {
		unix.Close(sock)
		return nil, err
	}
	if _, err := c.judge(p, false); err != nil {
		p.close()
		unix.Close(sock)
		return nil, err
	}
	s, tid := c.s, c.tid
	return func() (int64, error) {
		defer unix.Close(sock)
		defer p.close()
		name := append([]byte(p.name), 0)
		if len(name) > 108 {
			return 0, unix.ENAMETOOLONG
		}
		if err := unix.Fchdir(p.dir); err != nil {
			return 0, err
		}
		s.takeUmask(tid)
		return 0, raw(append([]byte{b[0], b[1]}, name...))
	}, nil
}

// pin opens, for a place whose last component is a link of /proc to
// follow, what it leads to (O_PATH, here, where the caller's domain lets
// it be followed): the call is then made on that, through this process's
// own /proc/self/fd. On an error the place is closed.
func (c *caller) pin(p *place) error {
	if !p.magic {
		return nil
	}
	fd, err := unix.Openat(p.dir, p.name, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		p.close()
		return err
	}
	p.pinned, p.hasPin = fd, true
	return nil
}

// judge refuses a place whose path is protected beneath a writable root
// (or one of the protected places anywhere), saying so on the command's
// standard error. With mkdir a .git directory may be made: gitDir says
// it is one, which the caller remembers as the command's own repository.
func (c *caller) judge(p place, mkdir bool) (gitDir bool, err error) {
	full := p.path()
	if !strings.HasPrefix(full, "/") {
		return false, nil // a pipe's or a socket's descriptor: no name
	}
	full = filepath.Clean(full)
	g := c.s.guard
	root := ""
	for _, r := range g.Roots {
		if (full == r || strings.HasPrefix(full, strings.TrimSuffix(r, "/")+"/")) && len(r) > len(root) {
			root = r
		}
	}
	rel := "."
	if root != "" {
		rel, _ = filepath.Rel(root, full)
	}
	ok, what, gitAt := g.Names.Sandboxed(rel, full)
	if !ok && !mkdir {
		ok, what = g.Names.OnTheWay(rel, full)
		gitAt = -1
	}
	switch {
	case !ok:
		return false, nil
	case mkdir && what == ".git":
		return true, nil
	case gitAt >= 0:
		parts := strings.Split(rel, "/")
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(root, filepath.Join(parts[:gitAt+1]...)), &st) == nil && c.s.isGitDir(devIno{st.Dev, st.Ino}) {
			return false, nil // the command's own repository
		}
	}
	c.s.tell(c.tid, full, what)
	return false, unix.EACCES
}

// tell says a refusal on the caller's own standard error (a copy of its
// descriptor 2: init's own streams are given up once the shell has
// started), once per path and no more than maxToldFiles in all. The write
// is made apart: a full pipe nobody reads must not hold the supervisor.
func (s *fileSupervisor) tell(tid int, path, what string) {
	s.mu.Lock()
	say := !s.told[path] && len(s.told) < maxToldFiles
	if say {
		s.told[path] = true
	}
	s.mu.Unlock()
	if !say {
		return
	}
	pidfd, err := TaskPidfd(tid)
	if err != nil {
		return
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, 2, 0)
	if err != nil {
		return
	}
	msg := fmt.Sprintf("agent-mcp sandbox: refused writing %s: %s is a protected name wherever it appears in a working directory (the Write and Edit tools refuse it too; an Edit allow rule naming the path lets them write it)\n", path, strings.TrimSuffix(what, "/"))
	go func() {
		defer unix.Close(fd)
		_, _ = unix.Write(fd, []byte(msg))
	}()
}

// takeUmask gives the supervisor's thread the umask of the caller tid.
func (s *fileSupervisor) takeUmask(tid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseInt(strings.TrimSpace(v), 8, 32); err == nil && int(m) != s.umask {
				unix.Umask(int(m))
				s.umask = int(m)
			}
			return
		}
	}
}

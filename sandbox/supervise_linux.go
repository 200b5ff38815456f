package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agent-mcp/agent-mcp/sandbox/egress"
	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// The egress proxy with Landlock alone (no network namespace to hold the
// command): the command's seccomp filter (launcher/seccomp.go) sends its
// socket(AF_INET*, SOCK_STREAM) and connect calls here, to a supervisor
// in the server that holds the filter's listener.
//
//   - socket: the supervisor makes a TCP socket of its own, bound to
//     127.0.0.1 and already connected to the server's proxy listener on
//     127.0.0.1 (which admits only the connections a supervisor made, by
//     their source port), and installs it in the command as the call's
//     result (SECCOMP_IOCTL_NOTIF_ADDFD). No unconnected internet socket
//     ever exists in the command.
//   - connect: the supervisor takes a copy of the command's descriptor
//     (pidfd_getfd). An internet socket is answered without the call ever
//     running: 0 when it is one connected to the proxy and the address
//     asked for is the proxy's (what HTTP_PROXY names), ECONNREFUSED
//     otherwise. Only a unix or netlink socket has the call run
//     (SECCOMP_USER_NOTIF_FLAG_CONTINUE): were the descriptor swapped for
//     an internet socket meanwhile, that one is connected already (or,
//     disconnected with AF_UNSPEC, still bound to 127.0.0.1), and
//     Landlock refuses TCP connect and bind.
//
// The proxy then judges each CONNECT or SOCKS5 request with the command's
// handler, as in the namespaces layer.

type (
	seccompNotif = launcher.SeccompNotif
	seccompResp  = launcher.SeccompResp
	seccompAddfd = launcher.SeccompAddfd
)

var seccompIoctl = launcher.SeccompIoctl

// supervisedProxy is the server's loopback listener for commands
// supervised this way, shared by all of them: a connection is served
// with the handler its supervisor registered for its source port, and any
// other is closed.
type supervisedProxy struct {
	ln      *net.TCPListener
	port    int
	mu      sync.Mutex
	pending map[int]registered
}

// registered is what a supervisor registered for a source port: the
// command's handler, and what to call once its connection is served.
type registered struct {
	h    *egress.Handler
	done func()
}

func newSupervisedProxy() (*supervisedProxy, error) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("the egress proxy's listener: %w", err)
	}
	p := &supervisedProxy{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, pending: map[int]registered{}}
	go p.serve()
	return p, nil
}

func (p *supervisedProxy) serve() {
	for {
		c, err := p.ln.AcceptTCP()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // EMFILE and the like: the next accept may do
		}
		ra := c.RemoteAddr().(*net.TCPAddr)
		p.mu.Lock()
		r, ok := p.pending[ra.Port]
		delete(p.pending, ra.Port)
		p.mu.Unlock()
		if !ok || !ra.IP.Equal(net.IPv4(127, 0, 0, 1)) {
			c.Close()
			if ok {
				r.done()
			}
			continue
		}
		go func() {
			defer r.done()
			r.h.ServeConn(context.Background(), c)
		}()
	}
}

// isProxy reports whether sa is the proxy's address.
func (p *supervisedProxy) isProxy(sa unix.Sockaddr) bool {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port == p.port && a.Addr == [4]byte{127, 0, 0, 1}
	case *unix.SockaddrInet6:
		return a.Port == p.port && netip.AddrFrom16(a.Addr).Unmap() == netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return false
}

// dial makes a TCP socket of domain (AF_INET or AF_INET6, the latter
// speaking IPv4 through a v4-mapped address) bound to 127.0.0.1 and
// connected to the proxy, whose connection h then serves; done is called
// once that connection has been served (or the dial failed).
func (p *supervisedProxy) dial(domain int, h *egress.Handler, done func()) (int, error) {
	fd, err := -1, error(nil)
	ok := false
	defer func() {
		if !ok {
			done()
		}
	}()
	if domain == unix.AF_INET6 {
		if fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			loop := [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}
			if err = unix.Bind(fd, &unix.SockaddrInet6{Addr: loop}); err != nil {
				unix.Close(fd)
				fd = -1
			}
		}
	}
	if fd < 0 {
		domain = unix.AF_INET
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return -1, err
		}
		if err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	// Bound to an address of its own (not the wildcard), the socket keeps
	// 127.0.0.1 even if disconnected: it can never listen on the network.
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	var port int
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		port = a.Port
	case *unix.SockaddrInet6:
		port = a.Port
	}
	p.mu.Lock()
	p.pending[port] = registered{h: h, done: done}
	p.mu.Unlock()
	var to unix.Sockaddr = &unix.SockaddrInet4{Port: p.port, Addr: [4]byte{127, 0, 0, 1}}
	if domain == unix.AF_INET6 {
		to = &unix.SockaddrInet6{Port: p.port, Addr: [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}}
	}
	for {
		err = unix.Connect(fd, to)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		p.mu.Lock()
		delete(p.pending, port)
		p.mu.Unlock()
		unix.Close(fd)
		return -1, err
	}
	ok = true
	return fd, nil
}

// supervisor answers one command's notifications.
type supervisor struct {
	fd    int // the seccomp listener
	proxy *supervisedProxy
	h     *egress.Handler
	mu    sync.Mutex
	told  map[string]bool // direct connections already said in the output
	// live counts the command's sockets whose connection the server still
	// serves (maxProxyConns).
	live atomic.Int32
	// ports are the ports of the host's loopback the rules name with a
	// port (egress.Rules.LoopbackPorts): a plain connect reaches them.
	ports []netip.AddrPort
}

// supervise receives the filter's listener from the command's launcher
// over ctl and answers its notifications until the command has ended.
func supervise(ctl *os.File, proxy *supervisedProxy, h *egress.Handler, forwarded bool) {
	defer ctl.Close()
	c, err := net.FileConn(ctl)
	if err != nil {
		return
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return
	}
	buf := make([]byte, 1)
	oob := make([]byte, rightsSpace(1))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return
	}
	files := receivedFiles(oob[:oobn], "seccomp-listener")
	if n != 1 || buf[0] != launcher.RelayListener || len(files) != 1 {
		for _, f := range files {
			f.Close()
		}
		return
	}
	fd, err := unix.FcntlInt(files[0].Fd(), unix.F_DUPFD_CLOEXEC, 0)
	files[0].Close()
	if err != nil {
		return
	}
	// Non-blocking, the listener is waited on by Go's network poller (a
	// seccomp listener is pollable): a waiting supervisor holds no thread.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return
	}
	s := &supervisor{fd: fd, proxy: proxy, h: h, told: map[string]bool{}, ports: h.Rules.LoopbackPorts()}
	if forwarded {
		// The launcher's supervisor of creating calls receives every
		// notification and forwards the socket calls here.
		f := os.NewFile(uintptr(fd), "seccomp-listener")
		defer f.Close()
		s.runForwarded(uc)
		return
	}
	s.run(os.NewFile(uintptr(fd), "seccomp-listener"))
}

// run answers the notifications on f (s.fd's file) until every process
// of the command has ended. The ioctls use s.fd: f.Fd would make the
// descriptor blocking again.
func (s *supervisor) run(f *os.File) {
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	for {
		var n seccompNotif
		var got, done bool
		err := rc.Read(func(fd uintptr) bool {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if _, err := unix.Poll(pfd, 0); err != nil {
				done = !errors.Is(err, unix.EINTR)
				return true
			}
			switch {
			case pfd[0].Revents&unix.POLLIN != 0:
				_, err := seccompIoctl(int(fd), unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n))
				// EINTR, or ENOENT: the caller was killed meanwhile.
				got = err == nil
				done = err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.ENOENT)
				return true
			case pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0:
				done = true // every process of the command has ended
				return true
			}
			return false // nothing yet: wait for the poller
		})
		if err != nil || done {
			return
		}
		if got {
			resp := s.answer(&n)
			// ENOENT: the caller is gone (killed); nothing to answer.
			_, _ = seccompIoctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		}
	}
}

// runForwarded answers the notifications the launcher forwards over uc
// (launcher.RelayNotification) until init is gone.
func (s *supervisor) runForwarded(uc *net.UnixConn) {
	size := int(unsafe.Sizeof(seccompNotif{}))
	buf := make([]byte, 1+size)
	for {
		n, err := uc.Read(buf)
		if err != nil {
			return
		}
		if n != len(buf) || buf[0] != launcher.RelayNotification {
			continue
		}
		var note seccompNotif
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&note)), size), buf[1:])
		go func() {
			resp := s.answer(&note)
			_, _ = seccompIoctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		}()
	}
}

// answer decides one notification.
func (s *supervisor) answer(n *seccompNotif) seccompResp {
	resp := seccompResp{ID: n.ID}
	fail := func(err error) seccompResp {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = unix.EACCES
		}
		resp.Error = -int32(errno)
		return resp
	}
	switch launcher.NotifiedCall(n.Data.Arch, n.Data.Nr) {
	case "socket":
		fd, err := s.socket(n)
		if err != nil {
			return fail(err)
		}
		resp.Val = int64(fd)
		return resp
	case "connect":
		cont, err := s.connect(n)
		if err != nil {
			return fail(err)
		}
		if cont {
			resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
		}
		return resp
	}
	return fail(unix.EACCES)
}

// socket makes the command's socket, connected to the proxy, and
// installs it in the command; the descriptor's number there.
func (s *supervisor) socket(n *seccompNotif) (int, error) {
	domain, typ := int(int32(n.Data.Args[0])), int(int32(n.Data.Args[1]))
	if s.live.Add(1) > maxProxyConns {
		s.live.Add(-1)
		return -1, unix.EMFILE
	}
	fd, err := s.proxy.dial(domain, s.h, func() { s.live.Add(-1) })
	if err != nil {
		return -1, unix.ECONNREFUSED
	}
	defer unix.Close(fd)
	if typ&unix.SOCK_NONBLOCK != 0 {
		if err := unix.SetNonblock(fd, true); err != nil {
			return -1, err
		}
	}
	add := seccompAddfd{ID: n.ID, Srcfd: uint32(fd)}
	if typ&unix.SOCK_CLOEXEC != 0 {
		add.NewfdFlags = unix.O_CLOEXEC
	}
	return seccompIoctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add))
}

// valid reports whether the notification's caller still waits for the
// answer (so its pid still names it).
func (s *supervisor) valid(id uint64) bool { return launcher.NotifValid(s.fd, id) }

// connect decides a connect call: cont when the call may run (a unix or
// netlink socket); else nil for "connected" (the proxy's own socket,
// asked for the proxy's address) or the error to fail it with.
func (s *supervisor) connect(n *seccompNotif) (cont bool, err error) {
	pidfd, err := launcher.TaskPidfd(int(n.Pid))
	if err != nil {
		return false, unix.EACCES
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, int(int32(n.Data.Args[0])), 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return false, unix.EBADF
		}
		return false, unix.EACCES
	}
	defer unix.Close(fd)
	if !s.valid(n.ID) {
		return false, unix.EACCES // the caller is gone; the answer is lost
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return false, unix.ENOTSOCK
	}
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return false, unix.EACCES
	}
	switch domain {
	case unix.AF_UNIX, unix.AF_NETLINK:
		return true, nil
	case unix.AF_INET, unix.AF_INET6:
	default:
		return false, unix.EACCES
	}
	to, err := s.address(n)
	if err != nil {
		return false, err
	}
	peer, perr := unix.Getpeername(fd)
	toProxy := perr == nil && s.proxy.isProxy(peer)
	if toProxy && to == netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(s.proxy.port)) {
		return false, nil
	}
	if toProxy && slices.Contains(s.ports, to) {
		// A port of the host's loopback a rule names with its port (as
		// in the namespaces layer, where init listens on just those):
		// the socket's connection to the proxy asks for it (the handler
		// judges it again and says a failure in the output).
		return false, tunnel(fd, to)
	}
	s.refused(to)
	return false, unix.ECONNREFUSED
}

// tunnelLimit bounds how long tunnel waits for the proxy's answer.
const tunnelLimit = 10 * time.Second

// tunnel asks the proxy, over fd (a copy of the command's socket,
// connected to it), to connect to to: a CONNECT request, whose answer
// it reads to its last byte and no further (what the service sends first
// is the command's to read). nil once the proxy connected it.
func tunnel(fd int, to netip.AddrPort) error {
	deadline := time.Now().Add(tunnelLimit)
	wait := func(events int16) error {
		for {
			left := time.Until(deadline)
			if left <= 0 {
				return unix.ETIMEDOUT
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
			n, err := unix.Poll(pfd, int(left.Milliseconds())+1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
		}
	}
	req := []byte(fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", to, to))
	for len(req) > 0 {
		n, err := unix.Write(fd, req)
		switch {
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
			if err := wait(unix.POLLOUT); err != nil {
				return unix.ECONNREFUSED
			}
			continue
		case err != nil:
			return unix.ECONNREFUSED
		}
		req = req[n:]
	}
	var head []byte
	b := make([]byte, 1)
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		if len(head) > 4096 {
			return unix.ECONNREFUSED
		}
		n, err := unix.Read(fd, b)
		switch {
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
			if err := wait(unix.POLLIN); err != nil {
				return unix.ECONNREFUSED
			}
			continue
		case err != nil || n == 0:
			return unix.ECONNREFUSED
		}
		head = append(head, b[0])
	}
	if !bytes.HasPrefix(head, []byte("HTTP/1.1 200 ")) {
		return unix.ECONNREFUSED
	}
	return nil
}

// address reads the address a connect call asks for from the caller's
// memory.
func (s *supervisor) address(n *seccompNotif) (netip.AddrPort, error) {
	size := int(n.Data.Args[2])
	if size < 2 {
		return netip.AddrPort{}, unix.EINVAL
	}
	size = min(size, 128)
	buf := make([]byte, size)
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(size)
	remote := []unix.RemoteIovec{{Base: uintptr(n.Data.Args[1]), Len: size}}
	if got, err := unix.ProcessVMReadv(int(n.Pid), local, remote, 0); err != nil || got != size {
		return netip.AddrPort{}, unix.EFAULT
	}
	if !s.valid(n.ID) {
		return netip.AddrPort{}, unix.EACCES
	}
	switch binary.NativeEndian.Uint16(buf) {
	case unix.AF_INET:
		if size < 16 {
			return netip.AddrPort{}, unix.EINVAL
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(buf[4:8])), binary.BigEndian.Uint16(buf[2:4])), nil
	case unix.AF_INET6:
		if size < 24 {
			return netip.AddrPort{}, unix.EINVAL
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(buf[8:24])).Unmap(), binary.BigEndian.Uint16(buf[2:4])), nil
	}
	return netip.AddrPort{}, unix.EAFNOSUPPORT
}

// maxTold bounds the addresses a supervisor remembers having said: the
// command's output bounds its lines anyway (the handler's Notice), and a
// command trying every port must not grow the server's memory.
const maxTold = 64

// refused says a direct connection in the command's output, once per
// address (past maxTold addresses, Notice alone keeps the output bounded).
func (s *supervisor) refused(to netip.AddrPort) {
	s.mu.Lock()
	seen := s.told[to.String()]
	if len(s.told) < maxTold {
		s.told[to.String()] = true
	}
	s.mu.Unlock()
	if !seen && s.h.Notice != nil {
		advice := ""
		if to.Addr().IsLoopback() {
			advice = "; " + egress.LoopbackAdvice(int(to.Port()))
		}
		s.h.Notice(fmt.Sprintf("agent-mcp network: refused %s: a direct connection; only the egress proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) is reachable, and it admits a host by rule or by the user's answer%s", to, advice))
	}
}

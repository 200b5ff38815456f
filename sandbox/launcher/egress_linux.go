package launcher

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// startRelay listens on ProxyPort in the command's network namespace and
// hands every connection accepted there to the server, as a descriptor
// sent over the socket pair at fd: the server serves it (package egress)
// with no copy of its bytes in between. So too, on the same address and
// port here, for each port of the host's loopback p names (LoopbackV4,
// LoopbackV6): the server connects those to the host's. It also connects, when the server
// asks, to a port of this namespace's loopback and hands that connection
// over: how another command of the session reaches a server this one
// runs. Raw system calls, not package net: importing it would make Go
// initialise the application's packages before this one.
func startRelay(fd int, p Plan) error {
	syscall.CloseOnExec(fd)
	lfd, err := listenLoopback(unix.AF_INET, ProxyPort)
	if err != nil {
		return fmt.Errorf("the egress relay: %w", err)
	}
	go handOver(lfd, fd, []byte{RelayAccepted})
	// The ports of the host's loopback a rule names: a plain TCP client
	// reaches them at the same address and port here.
	for _, port := range p.LoopbackV4 {
		l, err := listenLoopback(unix.AF_INET, port)
		if err != nil {
			return fmt.Errorf("listening for the host's loopback port %d: %w", port, err)
		}
		go handOver(l, fd, []byte{RelayForwarded, 4, byte(port >> 8), byte(port)})
	}
	for _, port := range p.LoopbackV6 {
		l, err := listenLoopback(unix.AF_INET6, port)
		if errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT) {
			continue // no IPv6 here: ::1 is not there to connect to either
		}
		if err != nil {
			return fmt.Errorf("listening for the host's loopback port [::1]:%d: %w", port, err)
		}
		go handOver(l, fd, []byte{RelayForwarded, 6, byte(port >> 8), byte(port)})
	}
	go func() {
		buf := make([]byte, 3)
		for {
			n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || n == 0 {
				return
			}
			if n != 3 || buf[0] != RelayDial {
				continue
			}
			port := int(buf[1])<<8 | int(buf[2])
			var rights []byte
			c, err := dialLoopback(port)
			if err == nil {
				rights = unix.UnixRights(c)
			}
			err = unix.Sendmsg(fd, []byte{RelayDialed, buf[1], buf[2]}, rights, nil, 0)
			if c >= 0 {
				unix.Close(c)
			}
			if err != nil {
				return
			}
		}
	}()
	return nil
}

// listenLoopback listens on the loopback address of family (AF_INET or
// AF_INET6) at port in this namespace.
func listenLoopback(family, port int) (int, error) {
	l, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = unix.SetsockoptInt(l, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	if family == unix.AF_INET6 {
		_ = unix.SetsockoptInt(l, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sa = &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
	}
	if err := unix.Bind(l, sa); err != nil {
		unix.Close(l)
		return -1, err
	}
	if err := unix.Listen(l, 128); err != nil {
		unix.Close(l)
		return -1, err
	}
	return l, nil
}

// handOver accepts the connections of listener l and sends each to the
// server over fd, after msg, until the server is gone.
func handOver(l, fd int, msg []byte) {
	defer unix.Close(l)
	for {
		c, _, err := unix.Accept4(l, unix.SOCK_CLOEXEC)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNABORTED) {
			continue
		}
		if err != nil {
			return
		}
		err = unix.Sendmsg(fd, msg, unix.UnixRights(c), nil, 0)
		unix.Close(c)
		if err != nil {
			return // the server is gone
		}
	}
}

// dialLoopback connects to 127.0.0.1:port in this namespace; -1 and the
// error when nothing listens there.
func dialLoopback(port int) (int, error) {
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for {
		err = unix.Connect(c, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		unix.Close(c)
		return -1, err
	}
	return c, nil
}

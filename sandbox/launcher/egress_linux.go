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
// with no copy of its bytes in between. It also connects, when the server
// asks, to a port of this namespace's loopback and hands that connection
// over: how another command of the session reaches a server this one
// runs. Raw system calls, not package net: importing it would make Go
// initialise the application's packages before this one.
func startRelay(fd int) error {
	syscall.CloseOnExec(fd)
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the egress relay's socket: %w", err)
	}
	_ = unix.SetsockoptInt(lfd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Port: ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(lfd)
		return fmt.Errorf("binding the egress relay to 127.0.0.1:%d: %w", ProxyPort, err)
	}
	if err := unix.Listen(lfd, 128); err != nil {
		unix.Close(lfd)
		return fmt.Errorf("listening for the egress proxy: %w", err)
	}
	go func() {
		defer unix.Close(lfd)
		for {
			c, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNABORTED) {
				continue
			}
			if err != nil {
				return
			}
			err = unix.Sendmsg(fd, []byte{RelayAccepted}, unix.UnixRights(c), nil, 0)
			unix.Close(c)
			if err != nil {
				return // the server is gone
			}
		}
	}()
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
			err = unix.Sendmsg(fd, []byte{RelayDialed}, rights, nil, 0)
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

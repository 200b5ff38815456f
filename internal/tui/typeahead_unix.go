//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tui

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
	xterm "golang.org/x/term"
)

// takeTerminal puts the terminal in into raw mode before the full UI's
// program starts, and takes what was typed before: keys typed as the chat
// starts went through the terminal's line mode, which turned each Enter
// into a newline (ICRNL) that the editor would read as Ctrl-J, a line
// break in the prompt, so the first prompt was not sent and went out later
// glued to the next one. Those newlines are given back as Enter. restore
// puts the terminal back as it was (the program restores only the raw
// mode it found).
func takeTerminal(in *os.File) (typed []byte, restore func()) {
	fd := int(in.Fd())
	tio, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, func() {}
	}
	state, err := xterm.MakeRaw(fd)
	if err != nil {
		return nil, func() {}
	}
	restore = func() { _ = xterm.Restore(fd, state) }
	buf := make([]byte, 4096)
	for len(typed) < 1<<16 {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 || fds[0].Revents&unix.POLLIN == 0 {
			break
		}
		k, err := unix.Read(fd, buf)
		if k <= 0 || err != nil {
			break
		}
		typed = append(typed, buf[:k]...)
	}
	if tio.Iflag&unix.ICRNL != 0 && tio.Lflag&unix.ICANON != 0 {
		for i, b := range typed {
			if b == '\n' {
				typed[i] = '\r'
			}
		}
	}
	return typed, restore
}

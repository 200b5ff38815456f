//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package shell

import (
	"os"

	"golang.org/x/sys/unix"
)

// rawOutput turns off output post-processing on a terminal, so lines end
// in "\n" rather than "\r\n".
func rawOutput(tty *os.File) {
	termios, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TIOCGETA)
	if err != nil {
		return
	}
	termios.Oflag &^= unix.OPOST
	_ = unix.IoctlSetTermios(int(tty.Fd()), unix.TIOCSETA, termios)
}

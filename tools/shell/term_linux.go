package shell

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// rawOutput turns off output post-processing on a terminal, so lines end
// in "\n" rather than "\r\n".
func rawOutput(tty *os.File) {
	termios, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		return
	}
	termios.Oflag &^= unix.OPOST
	_ = unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, termios)
}

// controllingTerminal makes the process started with attr lead a new
// session whose controlling terminal is its stdin (fd 0 in the child).
func controllingTerminal(attr *syscall.SysProcAttr) {
	attr.Setsid, attr.Setctty, attr.Ctty = true, true, 0
}

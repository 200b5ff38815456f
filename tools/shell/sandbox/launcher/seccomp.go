package launcher

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// With the network off and no network namespace to hold it, Landlock
// refuses TCP connect and bind (ABI 4+) but knows nothing of other
// sockets (a UDP datagram, a raw or SCTP socket, or a packet socket would
// still reach the host's network), nor of listen(2) on an unbound TCP
// socket, which binds it to a port of every address, nor of a send with
// MSG_FASTOPEN, which connects. A seccomp filter closes that: in the
// command, socket(2) may make unix and netlink sockets only; everything
// else fails with EACCES, the error Landlock gives. io_uring, which can
// make sockets without socket(2), is refused too. The filter checks the
// system call's architecture: a 32-bit compatibility call (int 0x80 on
// amd64) has other numbers and is judged by its own, and an architecture
// the filter does not know is refused.

// Socket domains the filter lets through; the same on every Linux
// architecture.
const afUnix, afNetlink = 1, 16

// The filter's answers: let the call through, or fail it with EACCES.
const (
	retAllow = 0x7fff0000      // SECCOMP_RET_ALLOW
	retErrno = 0x00050000 | 13 // SECCOMP_RET_ERRNO | EACCES
)

// Offsets in struct seccomp_data: the call's number, its architecture
// (AUDIT_ARCH_*), and its first argument (64 bits; the filter reads the
// low 32 bits, which is what socket(2)'s int domain is, at this offset on
// the little-endian architectures it is built for).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

// syscallSet is one architecture's system call numbers that the filter
// judges.
type syscallSet struct {
	arch uint32
	// socket lists socket(2)'s numbers; socketcall and ioUring are
	// refused outright (socketcall's arguments are in memory, out of the
	// filter's reach).
	socket, socketcall, ioUring []uint32
}

// asm assembles a BPF program with forward jumps to named labels.
type asm struct {
	ins    []bpf.Instruction
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at    int
	label string
}

func (a *asm) op(i bpf.Instruction) { a.ins = append(a.ins, i) }

func (a *asm) label(name string) { a.labels[name] = len(a.ins) }

// jeq jumps to label when the accumulator equals val.
func (a *asm) jeq(val uint32, label string) {
	a.fixups = append(a.fixups, fixup{len(a.ins), label})
	a.op(bpf.JumpIf{Cond: bpf.JumpEqual, Val: val})
}

// resolve sets the jumps' offsets.
func (a *asm) resolve() ([]bpf.Instruction, error) {
	for _, f := range a.fixups {
		to, ok := a.labels[f.label]
		if !ok || to <= f.at || to-f.at-1 > 255 {
			return nil, fmt.Errorf("seccomp filter: bad jump to %q", f.label)
		}
		j := a.ins[f.at].(bpf.JumpIf)
		j.SkipTrue = uint8(to - f.at - 1)
		a.ins[f.at] = j
	}
	return a.ins, nil
}

// socketFilter is the seccomp program for the architectures in sets (the
// native one first).
func socketFilter(sets []syscallSet) ([]bpf.Instruction, error) {
	a := &asm{labels: map[string]int{}}
	a.op(bpf.LoadAbsolute{Off: offArch, Size: 4})
	for i, s := range sets {
		a.jeq(s.arch, fmt.Sprintf("arch%d", i))
	}
	a.op(bpf.RetConstant{Val: retErrno}) // an architecture not known here
	for i, s := range sets {
		a.label(fmt.Sprintf("arch%d", i))
		a.op(bpf.LoadAbsolute{Off: offNr, Size: 4})
		for _, nr := range s.socket {
			a.jeq(nr, "socket")
		}
		for _, nr := range append(append([]uint32{}, s.socketcall...), s.ioUring...) {
			a.jeq(nr, "deny")
		}
		a.op(bpf.RetConstant{Val: retAllow})
	}
	a.label("socket")
	a.op(bpf.LoadAbsolute{Off: offArg0, Size: 4}) // domain
	a.jeq(afUnix, "allow")
	a.jeq(afNetlink, "allow")
	a.label("deny")
	a.op(bpf.RetConstant{Val: retErrno})
	a.label("allow")
	a.op(bpf.RetConstant{Val: retAllow})
	return a.resolve()
}

package launcher

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// With the network off and no network namespace to hold it, Landlock
// refuses TCP connect and bind (ABI 4+) but knows nothing of other
// sockets: a UDP datagram, a raw or SCTP socket, or a packet socket would
// still reach the host's network. A seccomp filter closes that: in the
// command, socket(2) may make unix and netlink sockets, and internet
// sockets only of type SOCK_STREAM with protocol 0 or TCP (and only where
// the caller lets TCP through; the launcher does not: Landlock does not
// see listen(2) on an unbound socket, which binds it to a port of every
// address); everything else fails with EACCES, the error
// Landlock gives. io_uring, which can make sockets without socket(2), is
// refused too, and so is a send with MSG_FASTOPEN: TCP Fast Open
// connects from sendto or sendmsg without connect(2), which Landlock
// does not see. The filter checks the system call's architecture: a 32-bit
// compatibility call (int 0x80 on amd64) has other numbers and is judged
// by its own, and an architecture the filter does not know is refused.

// Socket constants the filter compares with; the same on every Linux
// architecture.
const (
	afUnix, afInet, afNetlink, afInet6 = 1, 2, 16, 10
	sockStream, sockTypeMask           = 1, 0xf
	ipprotoTCP                         = 6
	msgFastopen                        = 0x20000000
)

// The filter's answers: let the call through, or fail it with EACCES.
const (
	retAllow = 0x7fff0000      // SECCOMP_RET_ALLOW
	retErrno = 0x00050000 | 13 // SECCOMP_RET_ERRNO | EACCES
)

// Offsets in struct seccomp_data: the call's number, its architecture
// (AUDIT_ARCH_*), and its arguments (64 bits each; the filter reads the
// low 32 bits, which is what socket(2)'s int arguments are, at these
// offsets on the little-endian architectures it is built for).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	offArg2 = 32
	offArg3 = 40
)

// syscallSet is one architecture's system call numbers that the filter
// judges.
type syscallSet struct {
	arch uint32
	// socket lists socket(2)'s numbers; socketcall and ioUring are
	// refused outright (socketcall's arguments are in memory, out of the
	// filter's reach).
	socket, socketcall, ioUring []uint32
	// sendmsg lists the calls with their flags in argument 2 (sendmsg),
	// send those with them in argument 3 (sendto, sendmmsg): a send with
	// MSG_FASTOPEN is refused where TCP sockets are let through.
	sendmsg, send []uint32
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

// jset jumps to label when the accumulator has a bit of val set.
func (a *asm) jset(val uint32, label string) {
	a.fixups = append(a.fixups, fixup{len(a.ins), label})
	a.op(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: val})
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
// native one first); tcp says whether internet stream sockets are let
// through (Landlock holds their connect and bind).
func socketFilter(sets []syscallSet, tcp bool) ([]bpf.Instruction, error) {
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
		if tcp {
			for _, nr := range s.sendmsg {
				a.jeq(nr, "flags2")
			}
			for _, nr := range s.send {
				a.jeq(nr, "flags3")
			}
		}
		a.op(bpf.RetConstant{Val: retAllow})
	}
	if tcp {
		a.label("flags2")
		a.op(bpf.LoadAbsolute{Off: offArg2, Size: 4})
		a.jset(msgFastopen, "deny")
		a.op(bpf.RetConstant{Val: retAllow})
		a.label("flags3")
		a.op(bpf.LoadAbsolute{Off: offArg3, Size: 4})
		a.jset(msgFastopen, "deny")
		a.op(bpf.RetConstant{Val: retAllow})
	}
	a.label("socket")
	a.op(bpf.LoadAbsolute{Off: offArg0, Size: 4}) // domain
	a.jeq(afUnix, "allow")
	a.jeq(afNetlink, "allow")
	if tcp {
		a.jeq(afInet, "inet")
		a.jeq(afInet6, "inet")
	}
	a.label("deny")
	a.op(bpf.RetConstant{Val: retErrno})
	if tcp {
		a.label("inet")
		a.op(bpf.LoadAbsolute{Off: offArg1, Size: 4}) // type, less SOCK_NONBLOCK and SOCK_CLOEXEC
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
		a.jeq(sockStream, "stream")
		a.op(bpf.RetConstant{Val: retErrno})
		a.label("stream")
		a.op(bpf.LoadAbsolute{Off: offArg2, Size: 4}) // protocol
		a.jeq(0, "allow")
		a.jeq(ipprotoTCP, "allow")
		a.op(bpf.RetConstant{Val: retErrno})
	}
	a.label("allow")
	a.op(bpf.RetConstant{Val: retAllow})
	return a.resolve()
}

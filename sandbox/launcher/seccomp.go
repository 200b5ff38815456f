package launcher

import (
	"fmt"
	"slices"

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
	// connect is notified to the supervisor in the supervised mode;
	// sendto and sendmmsg (flags in argument 3) and sendmsg (argument 2)
	// are refused there when they carry MSG_FASTOPEN.
	connect, sendto, sendmsg, sendmmsg []uint32
	// compat marks a compatibility architecture: its socket(2) makes
	// unix and netlink sockets only, also in the supervised mode.
	compat bool
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
// archs starts a filter: it loads the call's architecture, jumps to
// [asm.arch] i's part for archs[i], and returns unknown for any other.
func (a *asm) archs(archs []uint32, unknown uint32) {
	a.op(bpf.LoadAbsolute{Off: offArch, Size: 4})
	for i, arch := range archs {
		a.jeq(arch, fmt.Sprintf("arch%d", i))
	}
	a.op(bpf.RetConstant{Val: unknown}) // an architecture not known here
}

// arch starts the part for the i-th architecture given to [asm.archs]:
// its label, and the call's number loaded.
func (a *asm) arch(i int) {
	a.label(fmt.Sprintf("arch%d", i))
	a.op(bpf.LoadAbsolute{Off: offNr, Size: 4})
}

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

// archsOf are the architectures of sets, in order.
func archsOf(sets []syscallSet) []uint32 {
	out := make([]uint32, len(sets))
	for i, s := range sets {
		out[i] = s.arch
	}
	return out
}

// socketFilter is the seccomp program for the architectures in sets (the
// native one first).
func socketFilter(sets []syscallSet) ([]bpf.Instruction, error) {
	a := &asm{labels: map[string]int{}}
	a.archs(archsOf(sets), retErrno)
	for i, s := range sets {
		a.arch(i)
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

// The supervised mode (the egress proxy with Landlock alone): internet
// TCP sockets are made by a supervisor outside the sandbox, already
// connected to the egress proxy (supervise.go in package sandbox), and
// connect(2) is answered by it.
//
//   - socket(AF_INET or AF_INET6, SOCK_STREAM with SOCK_NONBLOCK and
//     SOCK_CLOEXEC at most, 0 or IPPROTO_TCP), native calls only: to the
//     supervisor (SECCOMP_RET_USER_NOTIF), which installs its own socket
//     as the call's result;
//   - connect(2), every architecture: to the supervisor, which answers it
//     without the call ever running for an internet socket, and lets it
//     run for a unix or netlink one;
//   - every other internet socket (datagram, raw, another protocol), a
//     packet socket, socketcall, io_uring: EACCES, as with the network
//     off; unix and netlink sockets are made as usual;
//   - a send with MSG_FASTOPEN (which connects an unconnected TCP
//     socket, unseen by Landlock): EACCES.
const (
	afInet, afInet6 = 2, 10
	sockStream      = 1
	ipprotoTCP      = 6
	// SOCK_NONBLOCK and SOCK_CLOEXEC, the same on amd64 and arm64 (and
	// their 32-bit twins).
	sockFlags = 0x800 | 0x80000
	// msgFastOpen is MSG_FASTOPEN.
	msgFastOpen = 0x20000000
	// retNotify is SECCOMP_RET_USER_NOTIF.
	retNotify = 0x7fc00000
	offArg1   = offArg0 + 8
	offArg2   = offArg0 + 16
	offArg3   = offArg0 + 24
)

// supervisedFilter is the seccomp program of the supervised mode for the
// architectures in sets (the native one first).
func supervisedFilter(sets []syscallSet) ([]bpf.Instruction, error) {
	return notifyFilter(sets, nil, true)
}

// netCalls are one architecture's jumps of the supervised mode, its
// call's number loaded.
func netCalls(a *asm, s syscallSet) {
	sock := "tcp"
	if s.compat {
		sock = "local"
	}
	for _, nr := range s.socket {
		a.jeq(nr, sock)
	}
	for _, nr := range s.connect {
		a.jeq(nr, "notify")
	}
	for _, nr := range append(append([]uint32{}, s.sendto...), s.sendmmsg...) {
		a.jeq(nr, "flags3")
	}
	for _, nr := range s.sendmsg {
		a.jeq(nr, "flags2")
	}
	for _, nr := range append(append([]uint32{}, s.socketcall...), s.ioUring...) {
		a.jeq(nr, "deny")
	}
}

// netLabels are the supervised mode's tests of the arguments, jumping to
// notify, deny and allow ([notifyFilter] places them).
func netLabels(a *asm) {
	a.label("tcp")
	a.op(bpf.LoadAbsolute{Off: offArg0, Size: 4}) // domain
	a.jeq(afUnix, "allow")
	a.jeq(afNetlink, "allow")
	a.jeq(afInet, "stream")
	a.jeq(afInet6, "stream")
	a.op(bpf.RetConstant{Val: retErrno})
	a.label("stream")
	a.op(bpf.LoadAbsolute{Off: offArg1, Size: 4}) // type
	a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ^uint32(sockFlags)})
	a.jeq(sockStream, "proto")
	a.op(bpf.RetConstant{Val: retErrno})
	a.label("proto")
	a.op(bpf.LoadAbsolute{Off: offArg2, Size: 4}) // protocol
	a.jeq(0, "notify")
	a.jeq(ipprotoTCP, "notify")
	a.op(bpf.RetConstant{Val: retErrno})
	a.label("local")
	a.op(bpf.LoadAbsolute{Off: offArg0, Size: 4})
	a.jeq(afUnix, "allow")
	a.jeq(afNetlink, "allow")
	a.op(bpf.RetConstant{Val: retErrno})
	a.label("flags3")
	a.op(bpf.LoadAbsolute{Off: offArg3, Size: 4})
	a.jset(msgFastOpen, "deny")
	a.op(bpf.RetConstant{Val: retAllow})
	a.label("flags2")
	a.op(bpf.LoadAbsolute{Off: offArg2, Size: 4})
	a.jset(msgFastOpen, "deny")
	a.op(bpf.RetConstant{Val: retAllow})
}

// NotifiedCall names the call a supervised filter's notification is
// about, "socket" or "connect", or a creating call (fsfilter.go: "open",
// "mkdirat", ...), by its architecture and number; empty for any other.
func NotifiedCall(arch uint32, nr int32) string {
	if c := fileCall(arch, nr); c != "" {
		return c
	}
	for _, s := range archSyscalls() {
		if s.arch != arch {
			continue
		}
		if slices.Contains(s.socket, uint32(nr)) && !s.compat {
			return "socket"
		}
		if slices.Contains(s.connect, uint32(nr)) {
			return "connect"
		}
	}
	return ""
}

package launcher

import (
	"fmt"
	"maps"
	"slices"

	"golang.org/x/net/bpf"
)

// A command may not leave a set-user-ID or set-group-ID program behind for
// something outside the sandbox to run (a root-owned copy of /bin/sh with
// the set-user-ID bit, run later by any user), nor make a device node. A
// seccomp filter refuses, with EPERM, every call that sets those mode
// bits: chmod, fchmod, fchmodat and fchmodat2 with S_ISUID or S_ISGID in
// the mode; open, openat and creat with them in the mode of a file they
// may create; mknod and mknodat of a character or block device or with
// those bits. openat2, whose mode is in memory the filter cannot read,
// fails with ENOSYS, on which callers fall back to openat; so does
// io_uring (setup, enter, register), whose openat and openat2 carry the
// mode in a ring the filter never sees (callers such as libuv fall back
// to plain calls; Docker's default profile refuses it too). Like the
// socket filter it checks the architecture, judges a 32-bit call by its
// own numbers, and refuses architectures it does not know.

// Mode bits (the same on every Linux architecture).
const (
	modeSetID   = 0o6000 // S_ISUID | S_ISGID
	modeType    = 0o170000
	modeCharDev = 0o020000
	modeBlkDev  = 0o060000
)

// The filter's answers besides allow.
const (
	retEPERM  = 0x00050000 | 1  // SECCOMP_RET_ERRNO | EPERM
	retENOSYS = 0x00050000 | 38 // SECCOMP_RET_ERRNO | ENOSYS
)

// privSyscalls is one architecture's calls that the privilege filter
// judges, each by the argument that holds the mode (0-based).
type privSyscalls struct {
	arch uint32
	// mode maps a call's number to its mode argument (chmod, open, ...).
	mode map[uint32]int
	// mknod maps mknod's and mknodat's numbers to their mode argument.
	mknod map[uint32]int
	// refused are calls that fail with ENOSYS (openat2, io_uring).
	refused []uint32
}

// jset jumps to label when the accumulator has a bit of mask set.
func (a *asm) jset(mask uint32, label string) {
	a.fixups = append(a.fixups, fixup{len(a.ins), label})
	a.op(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: mask})
}

// privilegeFilter is the seccomp program for the architectures in sets
// (the native one first).
func privilegeFilter(sets []privSyscalls) ([]bpf.Instruction, error) {
	a := &asm{labels: map[string]int{}}
	archs := make([]uint32, len(sets))
	for i, s := range sets {
		archs[i] = s.arch
	}
	a.archs(archs, retEPERM)
	for i, s := range sets {
		a.arch(i)
		for _, nr := range slices.Sorted(maps.Keys(s.mode)) {
			a.jeq(nr, fmt.Sprintf("mode%d", s.mode[nr]))
		}
		for _, nr := range slices.Sorted(maps.Keys(s.mknod)) {
			a.jeq(nr, fmt.Sprintf("mknod%d", s.mknod[nr]))
		}
		for _, nr := range s.refused {
			a.jeq(nr, "enosys")
		}
		a.op(bpf.RetConstant{Val: retAllow})
	}
	// The mode is an int or mode_t: its low 32 bits, at this offset on
	// the little-endian architectures the filter is built for.
	for arg := 0; arg < 4; arg++ {
		a.label(fmt.Sprintf("mknod%d", arg))
		a.op(bpf.LoadAbsolute{Off: uint32(offArg0 + 8*arg), Size: 4})
		a.jset(modeSetID, "eperm")
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: modeType})
		a.jeq(modeCharDev, "eperm")
		a.jeq(modeBlkDev, "eperm")
		a.op(bpf.RetConstant{Val: retAllow})
		a.label(fmt.Sprintf("mode%d", arg))
		a.op(bpf.LoadAbsolute{Off: uint32(offArg0 + 8*arg), Size: 4})
		a.jset(modeSetID, "eperm")
		a.op(bpf.RetConstant{Val: retAllow})
	}
	a.label("enosys")
	a.op(bpf.RetConstant{Val: retENOSYS})
	a.label("eperm")
	a.op(bpf.RetConstant{Val: retEPERM})
	return a.resolve()
}

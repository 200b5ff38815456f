package launcher

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// The socket filter is run on x/net/bpf's virtual machine with the
// seccomp_data of calls (its loads are big-endian, so the data is written
// big-endian: the words it reads are those the kernel reads natively). The
// e2e tests check the installed filter against a real UDP listener.
func TestSocketFilter(t *testing.T) {
	t.Parallel()
	const native, compat, other = 0xc000003e, 0x40000003, 0xc00000f3
	sets := []syscallSet{
		{arch: native, socket: []uint32{41, 41 | 0x40000000}, ioUring: []uint32{425}},
		{arch: compat, socket: []uint32{359}, socketcall: []uint32{102}, ioUring: []uint32{425}},
	}
	const afInet, afInet6, afPacket = 2, 10, 17
	const sockStream, sockDgram, sockRaw, sockSeqpacket = 1, 2, 3, 5
	const ipprotoTCP, ipprotoSCTP, ipprotoMPTCP = 6, 132, 262
	const nonblockCloexec = 0o4000 | 0o2000000
	// The type and protocol (arguments 1 and 2) do not matter: they are
	// given to show that no value of theirs lets an internet socket through.
	type call struct {
		name        string
		arch, nr    uint32
		domain, typ uint32
		proto       uint32
		allowed     bool
	}
	calls := []call{
		{"read", native, 0, 0, 0, 0, true},
		{"unix stream socket", native, 41, afUnix, sockStream, 0, true},
		{"unix datagram socket", native, 41, afUnix, sockDgram, 0, true},
		{"netlink socket", native, 41, afNetlink, sockRaw, 0, true},
		{"TCP socket", native, 41, afInet, sockStream, 0, false},
		{"TCP socket, protocol named", native, 41, afInet, sockStream, ipprotoTCP, false},
		{"TCP6 socket, nonblocking", native, 41, afInet6, sockStream | nonblockCloexec, 0, false},
		{"x32 TCP socket", native, 41 | 0x40000000, afInet, sockStream, 0, false},
		{"UDP socket", native, 41, afInet, sockDgram, 0, false},
		{"UDP6 socket, nonblocking", native, 41, afInet6, sockDgram | nonblockCloexec, 0, false},
		{"x32 UDP socket", native, 41 | 0x40000000, afInet, sockDgram, 0, false},
		{"raw socket", native, 41, afInet, sockRaw, 0, false},
		{"SCTP stream socket", native, 41, afInet, sockStream, ipprotoSCTP, false},
		{"MPTCP socket", native, 41, afInet, sockStream, ipprotoMPTCP, false},
		{"SCTP seqpacket socket", native, 41, afInet6, sockSeqpacket, 0, false},
		{"packet socket", native, 41, afPacket, sockRaw, 0, false},
		{"io_uring_setup", native, 425, 0, 0, 0, false},
		{"compat read", compat, 3, 0, 0, 0, true},
		{"compat socketcall", compat, 102, 1, 0, 0, false},
		{"compat UDP socket", compat, 359, afInet, sockDgram, 0, false},
		{"compat TCP socket", compat, 359, afInet, sockStream, 0, false},
		{"compat io_uring_setup", compat, 425, 0, 0, 0, false},
		{"an architecture not known", other, 0, 0, 0, 0, false},
	}
	ins, err := socketFilter(sets)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bpf.Assemble(ins); err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		data := make([]byte, 64)
		binary.BigEndian.PutUint32(data[offNr:], c.nr)
		binary.BigEndian.PutUint32(data[offArch:], c.arch)
		binary.BigEndian.PutUint32(data[offArg0:], c.domain)
		binary.BigEndian.PutUint32(data[offArg0+8:], c.typ)
		binary.BigEndian.PutUint32(data[offArg0+16:], c.proto)
		got, err := vm.Run(data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		wantRet := retErrno
		if c.allowed {
			wantRet = retAllow
		}
		if got != wantRet {
			t.Errorf("%s: filter returned %#x, want %#x", c.name, got, wantRet)
		}
	}
}

// The filter built for this machine's architecture assembles.
func TestSocketFilterForThisArchitecture(t *testing.T) {
	t.Parallel()
	sets := archSyscalls()
	if sets == nil {
		t.Skip("no socket filter for this architecture")
	}
	ins, err := socketFilter(sets)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bpf.Assemble(ins); err != nil {
		t.Fatal(err)
	}
}

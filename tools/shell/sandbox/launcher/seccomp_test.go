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
	const sockDgram, sockRaw, sockSeqpacket, afPacket, ipprotoSCTP, ipprotoMPTCP = 2, 3, 5, 17, 132, 262
	const nonblockCloexec = 0o4000 | 0o2000000
	type call struct {
		name           string
		arch, nr       uint32
		domain, typ    uint32
		proto          uint32
		withTCP, noTCP bool // allowed with TCP let through, and without
	}
	calls := []call{
		{"read", native, 0, 0, 0, 0, true, true},
		{"unix stream socket", native, 41, afUnix, sockStream, 0, true, true},
		{"unix datagram socket", native, 41, afUnix, sockDgram, 0, true, true},
		{"netlink socket", native, 41, afNetlink, sockRaw, 0, true, true},
		{"TCP socket", native, 41, afInet, sockStream, 0, true, false},
		{"TCP socket, protocol named", native, 41, afInet, sockStream, ipprotoTCP, true, false},
		{"TCP6 socket, nonblocking", native, 41, afInet6, sockStream | nonblockCloexec, 0, true, false},
		{"x32 TCP socket", native, 41 | 0x40000000, afInet, sockStream, 0, true, false},
		{"UDP socket", native, 41, afInet, sockDgram, 0, false, false},
		{"UDP6 socket, nonblocking", native, 41, afInet6, sockDgram | nonblockCloexec, 0, false, false},
		{"x32 UDP socket", native, 41 | 0x40000000, afInet, sockDgram, 0, false, false},
		{"raw socket", native, 41, afInet, sockRaw, 0, false, false},
		{"SCTP stream socket", native, 41, afInet, sockStream, ipprotoSCTP, false, false},
		{"MPTCP socket", native, 41, afInet, sockStream, ipprotoMPTCP, false, false},
		{"SCTP seqpacket socket", native, 41, afInet6, sockSeqpacket, 0, false, false},
		{"packet socket", native, 41, afPacket, sockRaw, 0, false, false},
		{"io_uring_setup", native, 425, 0, 0, 0, false, false},
		{"compat read", compat, 3, 0, 0, 0, true, true},
		{"compat socketcall", compat, 102, 1, 0, 0, false, false},
		{"compat UDP socket", compat, 359, afInet, sockDgram, 0, false, false},
		{"compat TCP socket", compat, 359, afInet, sockStream, 0, true, false},
		{"compat io_uring_setup", compat, 425, 0, 0, 0, false, false},
		{"an architecture not known", other, 0, 0, 0, 0, false, false},
	}
	for _, tcp := range []bool{true, false} {
		ins, err := socketFilter(sets, tcp)
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
			binary.BigEndian.PutUint32(data[offArg1:], c.typ)
			binary.BigEndian.PutUint32(data[offArg2:], c.proto)
			got, err := vm.Run(data)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want := c.noTCP
			if tcp {
				want = c.withTCP
			}
			wantRet := retErrno
			if want {
				wantRet = retAllow
			}
			if got != wantRet {
				t.Errorf("tcp %v, %s: filter returned %#x, want %#x", tcp, c.name, got, wantRet)
			}
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
	for _, tcp := range []bool{true, false} {
		ins, err := socketFilter(sets, tcp)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bpf.Assemble(ins); err != nil {
			t.Fatal(err)
		}
	}
}

// A send with MSG_FASTOPEN connects a TCP socket without connect(2),
// which Landlock does not see: where TCP sockets are let through, the
// filter refuses it (sendmsg's flags are its argument 2, sendto's and
// sendmmsg's argument 3); other sends pass.
func TestSocketFilterRefusesFastOpen(t *testing.T) {
	t.Parallel()
	const native, compat = 0xc000003e, 0x40000003
	sets := []syscallSet{
		{arch: native, socket: []uint32{41}, sendmsg: []uint32{46, 518 | 0x40000000}, send: []uint32{44, 307}},
		{arch: compat, socket: []uint32{359}, sendmsg: []uint32{370}, send: []uint32{369}},
	}
	const msgDontwait = 0x40
	type call struct {
		name     string
		arch, nr uint32
		arg      int // the flags' argument
		flags    uint32
		allowed  bool
	}
	calls := []call{
		{"sendto", native, 44, 3, msgDontwait, true},
		{"sendto MSG_FASTOPEN", native, 44, 3, msgFastopen | msgDontwait, false},
		{"sendmsg", native, 46, 2, msgDontwait, true},
		{"sendmsg MSG_FASTOPEN", native, 46, 2, msgFastopen, false},
		{"x32 sendmsg MSG_FASTOPEN", native, 518 | 0x40000000, 2, msgFastopen, false},
		{"sendmmsg MSG_FASTOPEN", native, 307, 3, msgFastopen, false},
		{"compat sendto MSG_FASTOPEN", compat, 369, 3, msgFastopen, false},
		{"compat sendmsg", compat, 370, 2, 0, true},
	}
	for _, tcp := range []bool{true, false} {
		ins, err := socketFilter(sets, tcp)
		if err != nil {
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
			binary.BigEndian.PutUint32(data[offArg0+8*c.arg:], c.flags)
			got, err := vm.Run(data)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			// Without TCP sockets no internet socket is made: sends pass.
			wantRet := uint32(retAllow)
			if tcp && !c.allowed {
				wantRet = retErrno
			}
			if uint32(got) != wantRet {
				t.Errorf("tcp %v, %s: filter returned %#x, want %#x", tcp, c.name, got, wantRet)
			}
		}
	}
}

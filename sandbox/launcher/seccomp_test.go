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

// TestSupervisedFilter: the supervised mode's filter sends a native TCP
// socket(2) and every connect(2) to the supervisor, refuses every other
// internet socket, socketcall, io_uring and a send with MSG_FASTOPEN, and
// lets unix and netlink sockets and other calls through.
func TestSupervisedFilter(t *testing.T) {
	t.Parallel()
	const native, compat, other = 0xc000003e, 0x40000003, 0xc00000f3
	sets := []syscallSet{
		{arch: native, socket: []uint32{41}, ioUring: []uint32{425},
			connect: []uint32{42}, sendto: []uint32{44}, sendmsg: []uint32{46}, sendmmsg: []uint32{307}},
		{arch: compat, compat: true, socket: []uint32{359}, socketcall: []uint32{102}, ioUring: []uint32{425},
			connect: []uint32{362}, sendto: []uint32{369}, sendmsg: []uint32{370}, sendmmsg: []uint32{345}},
	}
	const afPacket = 17
	const sockDgram, sockRaw, sockSeqpacket = 2, 3, 5
	const ipprotoSCTP, ipprotoMPTCP = 132, 262
	const nonblockCloexec = 0o4000 | 0o2000000
	const notify, allow, deny = retNotify, retAllow, retErrno
	type call = filterCall
	calls := []call{
		{"read", native, 0, [4]uint32{}, allow},
		{"unix socket", native, 41, [4]uint32{afUnix, sockStream}, allow},
		{"netlink socket", native, 41, [4]uint32{afNetlink, sockRaw}, allow},
		{"TCP socket", native, 41, [4]uint32{afInet, sockStream}, notify},
		{"TCP socket, protocol named", native, 41, [4]uint32{afInet, sockStream, ipprotoTCP}, notify},
		{"TCP6 socket, nonblocking and close-on-exec", native, 41, [4]uint32{afInet6, sockStream | nonblockCloexec}, notify},
		{"TCP socket with an unknown type flag", native, 41, [4]uint32{afInet, sockStream | 0x100}, deny},
		{"UDP socket", native, 41, [4]uint32{afInet, sockDgram}, deny},
		{"UDP6 socket, nonblocking", native, 41, [4]uint32{afInet6, sockDgram | nonblockCloexec}, deny},
		{"raw socket", native, 41, [4]uint32{afInet, sockRaw, ipprotoTCP}, deny},
		{"SCTP stream socket", native, 41, [4]uint32{afInet, sockStream, ipprotoSCTP}, deny},
		{"MPTCP socket", native, 41, [4]uint32{afInet, sockStream, ipprotoMPTCP}, deny},
		{"SCTP seqpacket socket", native, 41, [4]uint32{afInet6, sockSeqpacket}, deny},
		{"packet socket", native, 41, [4]uint32{afPacket, sockRaw}, deny},
		{"connect", native, 42, [4]uint32{3}, notify},
		{"sendto", native, 44, [4]uint32{3, 0, 1, 0}, allow},
		{"sendto with MSG_FASTOPEN", native, 44, [4]uint32{3, 0, 1, msgFastOpen}, deny},
		{"sendto with MSG_FASTOPEN and more", native, 44, [4]uint32{3, 0, 1, msgFastOpen | 0x4000}, deny},
		{"sendmsg", native, 46, [4]uint32{3, 0, 0x4000}, allow},
		{"sendmsg with MSG_FASTOPEN", native, 46, [4]uint32{3, 0, msgFastOpen}, deny},
		{"sendmmsg with MSG_FASTOPEN", native, 307, [4]uint32{3, 0, 1, msgFastOpen}, deny},
		{"io_uring_setup", native, 425, [4]uint32{}, deny},
		{"compat TCP socket", compat, 359, [4]uint32{afInet, sockStream}, deny},
		{"compat unix socket", compat, 359, [4]uint32{afUnix, sockStream}, allow},
		{"compat connect", compat, 362, [4]uint32{3}, notify},
		{"compat sendto with MSG_FASTOPEN", compat, 369, [4]uint32{3, 0, 1, msgFastOpen}, deny},
		{"compat socketcall", compat, 102, [4]uint32{3}, deny},
		{"an architecture not known", other, 42, [4]uint32{}, deny},
	}
	ins, err := supervisedFilter(sets)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bpf.Assemble(ins); err != nil {
		t.Fatal(err)
	}
	runFilterCalls(t, ins, calls)
}

// NotifiedCall names the calls the supervisor is sent: this
// architecture's native socket and every connect; a compatibility
// socket(2) is never sent.
func TestNotifiedCall(t *testing.T) {
	t.Parallel()
	sets := archSyscalls()
	if sets == nil {
		t.Skip("no socket filter for this architecture")
	}
	for _, s := range sets {
		if got, want := NotifiedCall(s.arch, int32(s.socket[0])), map[bool]string{false: "socket", true: ""}[s.compat]; got != want {
			t.Errorf("arch %#x socket: %q, want %q", s.arch, got, want)
		}
		if got := NotifiedCall(s.arch, int32(s.connect[0])); got != "connect" {
			t.Errorf("arch %#x connect: %q", s.arch, got)
		}
		if got := NotifiedCall(s.arch, 0); got != "" {
			t.Errorf("arch %#x call 0: %q", s.arch, got)
		}
	}
	if got := NotifiedCall(0xdead, int32(sets[0].connect[0])); got != "" {
		t.Errorf("an unknown architecture: %q", got)
	}
}

// filterCall is one system call put to a filter and the answer wanted.
type filterCall struct {
	name     string
	arch, nr uint32
	args     [4]uint32
	want     uint32
}

// runFilterCalls runs the filter ins in the kernel's BPF interpreter's
// stand-in on each call's seccomp_data and checks its answer.
func runFilterCalls(t *testing.T, ins []bpf.Instruction, calls []filterCall) {
	t.Helper()
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		data := make([]byte, 64)
		binary.BigEndian.PutUint32(data[offNr:], c.nr)
		binary.BigEndian.PutUint32(data[offArch:], c.arch)
		for i, a := range c.args {
			binary.BigEndian.PutUint32(data[offArg0+8*i:], a)
		}
		got, err := vm.Run(data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if uint32(got) != c.want {
			t.Errorf("%s: the filter answers %#x, want %#x", c.name, got, c.want)
		}
	}
}

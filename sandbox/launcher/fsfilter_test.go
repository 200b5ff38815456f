package launcher

import (
	"testing"

	"golang.org/x/net/bpf"
)

// TestNotifyFilter: the creating calls' filter sends an open only with
// write access, O_CREAT or O_TRUNC, and every mkdir, rename, link, symlink,
// mknod, truncate, bind, creat and openat2, to the supervisor; it refuses
// a compatibility truncate64 and lets every other call through; with the
// supervised socket mode it sends the socket calls too.
func TestNotifyFilter(t *testing.T) {
	t.Parallel()
	const native, compat, other = 0xc000003e, 0x40000003, 0xc00000f3
	files := []fileSet{
		{arch: native, calls: map[string][]uint32{"open": {2}, "openat": {257}, "creat": {85}, "openat2": {437},
			"mkdir": {83}, "mkdirat": {258}, "rename": {82}, "renameat2": {316}, "linkat": {265}, "symlink": {88},
			"mknodat": {259}, "truncate": {76}, "bind": {49}}},
		{arch: compat, deny: []uint32{193}, calls: map[string][]uint32{"open": {5}, "openat": {295}, "mkdir": {39}}},
	}
	sets := []syscallSet{
		{arch: native, socket: []uint32{41}, connect: []uint32{42}},
		{arch: compat, compat: true, socket: []uint32{359}, connect: []uint32{362}},
	}
	const oRDONLY, oWRONLY, oRDWR, oCREAT, oTRUNC, oAPPEND, oDIRECTORY = 0, 1, 2, 0x40, 0x200, 0x400, 0x10000
	const notify, allow, deny = retNotify, retAllow, retErrno
	type call = filterCall
	calls := []call{
		{"read", native, 0, [4]uint32{}, allow},
		{"open for reading", native, 2, [4]uint32{0, oRDONLY}, allow},
		{"open a directory", native, 2, [4]uint32{0, oRDONLY | oDIRECTORY}, allow},
		{"open for writing", native, 2, [4]uint32{0, oWRONLY}, notify},
		{"open to append", native, 2, [4]uint32{0, oWRONLY | oAPPEND}, notify},
		{"open read-write", native, 2, [4]uint32{0, oRDWR}, notify},
		{"open O_CREAT", native, 2, [4]uint32{0, oCREAT}, notify},
		{"open O_TRUNC", native, 2, [4]uint32{0, oTRUNC}, notify},
		{"openat for reading", native, 257, [4]uint32{3, 0, oRDONLY}, allow},
		{"openat, flags in the mode's place", native, 257, [4]uint32{3, 0, oRDONLY, oCREAT}, allow},
		{"openat O_CREAT", native, 257, [4]uint32{3, 0, oCREAT | oWRONLY}, notify},
		{"creat", native, 85, [4]uint32{}, notify},
		{"openat2", native, 437, [4]uint32{}, notify},
		{"mkdir", native, 83, [4]uint32{}, notify},
		{"mkdirat", native, 258, [4]uint32{}, notify},
		{"rename", native, 82, [4]uint32{}, notify},
		{"renameat2", native, 316, [4]uint32{}, notify},
		{"linkat", native, 265, [4]uint32{}, notify},
		{"symlink", native, 88, [4]uint32{}, notify},
		{"mknodat", native, 259, [4]uint32{}, notify},
		{"truncate", native, 76, [4]uint32{}, notify},
		{"bind", native, 49, [4]uint32{}, notify},
		{"compat open for reading", compat, 5, [4]uint32{0, oRDONLY}, allow},
		{"compat open O_CREAT", compat, 5, [4]uint32{0, oCREAT | oWRONLY}, notify},
		{"compat openat O_TRUNC", compat, 295, [4]uint32{3, 0, oTRUNC}, notify},
		{"compat mkdir", compat, 39, [4]uint32{}, notify},
		{"compat truncate64", compat, 193, [4]uint32{}, deny},
		{"an architecture not known", other, 2, [4]uint32{0, oCREAT}, deny},
	}
	t.Run("files", func(t *testing.T) {
		ins, err := notifyFilter(nil, files, false)
		if err != nil {
			t.Fatal(err)
		}
		runFilterCalls(t, ins, append(calls, call{"connect", native, 42, [4]uint32{3}, allow}))
	})
	t.Run("files and sockets", func(t *testing.T) {
		ins, err := notifyFilter(sets, files, true)
		if err != nil {
			t.Fatal(err)
		}
		runFilterCalls(t, ins, append(calls, call{"connect", native, 42, [4]uint32{3}, notify},
			call{"TCP socket", native, 41, [4]uint32{afInet, sockStream}, notify},
			call{"compat connect", compat, 362, [4]uint32{3}, notify}))
	})
}

// TestFileCallsForThisArchitecture: the filter for this machine's
// architecture assembles, and each call it sends is named for the
// supervisor.
func TestFileCallsForThisArchitecture(t *testing.T) {
	t.Parallel()
	files := fileSyscalls()
	if files == nil {
		t.Skip("no filter of creating calls for this architecture")
	}
	ins, err := notifyFilter(archSyscalls(), files, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bpf.Assemble(ins); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for name, nrs := range f.calls {
			for _, nr := range nrs {
				if got := NotifiedCall(f.arch, int32(nr)); got != name {
					t.Errorf("arch %#x call %d: named %q, want %q", f.arch, nr, got, name)
				}
			}
		}
	}
}

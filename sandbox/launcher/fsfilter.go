package launcher

import (
	"slices"

	"golang.org/x/net/bpf"
)

// The creating calls. A command's calls that may create or change a name
// inside a writable root go to a supervisor in its launcher
// (fsguard_linux.go), which judges the path they resolve to against the
// protected names and, when it may, performs the call itself:
//
//   - open, openat: only with write access, O_CREAT or O_TRUNC in the
//     flags (the filter reads them: an argument, not memory); creat and
//     openat2 (whose flags are in memory) always;
//   - mkdir, mkdirat, mknod, mknodat, rename, renameat, renameat2, link,
//     linkat, symlink, symlinkat, truncate: always;
//   - bind: always (a unix socket's path is a name made).
//
// A compatibility call (i386 on amd64, 32-bit ARM on arm64) is judged the
// same way, except truncate64, whose length is split across registers
// differently on each: refused with EACCES.

// RelayNotification (init → server, the supervised socket mode with the
// supervisor of creating calls) carries a notification that is not a
// creating call, a struct seccomp_notif after this byte, for the server
// to answer on its copy of the listener.
const RelayNotification = 'N'

// fileSet is one architecture's creating calls, by the name the
// supervisor knows them by (fileCalls), and the calls refused outright.
type fileSet struct {
	arch  uint32
	calls map[string][]uint32
	deny  []uint32
}

// Open flags the filter tests, the same on every architecture it is
// built for: O_WRONLY, O_RDWR, O_CREAT, O_TRUNC.
const openWriteFlags = 0x1 | 0x2 | 0x40 | 0x200

// fileCallNames are the calls of a fileSet, in the order the filter
// tests them.
var fileCallNames = []string{"open", "openat", "creat", "openat2", "mkdir", "mkdirat", "mknod", "mknodat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "truncate", "bind"}

// notifyFilter is the seccomp program that sends a command's calls to
// its supervisors, for the architectures in sets and files (the native one
// first, the same order in both): the creating calls (files; none when
// nil) and, with net, the supervised socket mode's (supervisedFilter).
// Everything else is allowed: the other filters judge it.
func notifyFilter(sets []syscallSet, files []fileSet, net bool) ([]bpf.Instruction, error) {
	a := &asm{labels: map[string]int{}}
	archs := archsOf(sets)
	if !net {
		archs = nil
		for _, f := range files {
			archs = append(archs, f.arch)
		}
	}
	a.archs(archs, retErrno)
	for i, arch := range archs {
		a.arch(i)
		if net {
			netCalls(a, sets[i])
		}
		if f := fileSetOf(files, arch); f != nil {
			for _, nr := range f.calls["open"] {
				a.jeq(nr, "oflags1")
			}
			for _, nr := range f.calls["openat"] {
				a.jeq(nr, "oflags2")
			}
			for _, name := range fileCallNames[2:] {
				for _, nr := range f.calls[name] {
					a.jeq(nr, "notify")
				}
			}
			for _, nr := range f.deny {
				a.jeq(nr, "deny")
			}
		}
		a.op(bpf.RetConstant{Val: retAllow})
	}
	if net {
		netLabels(a)
	}
	a.label("oflags1")
	a.op(bpf.LoadAbsolute{Off: offArg1, Size: 4})
	a.jset(openWriteFlags, "notify")
	a.op(bpf.RetConstant{Val: retAllow})
	a.label("oflags2")
	a.op(bpf.LoadAbsolute{Off: offArg2, Size: 4})
	a.jset(openWriteFlags, "notify")
	a.op(bpf.RetConstant{Val: retAllow})
	a.label("notify")
	a.op(bpf.RetConstant{Val: retNotify})
	a.label("deny")
	a.op(bpf.RetConstant{Val: retErrno})
	a.label("allow")
	a.op(bpf.RetConstant{Val: retAllow})
	return a.resolve()
}

// fileSetOf is arch's set in files, nil when there is none.
func fileSetOf(files []fileSet, arch uint32) *fileSet {
	for i := range files {
		if files[i].arch == arch {
			return &files[i]
		}
	}
	return nil
}

// fileCall names a creating call by its architecture and number; empty
// for any other.
func fileCall(arch uint32, nr int32) string {
	f := fileSetOf(fileSyscalls(), arch)
	if f == nil {
		return ""
	}
	for _, name := range fileCallNames {
		if slices.Contains(f.calls[name], uint32(nr)) {
			return name
		}
	}
	return ""
}

package launcher

// privArchSyscalls: arm64's own calls (it has no chmod, mknod, open or
// creat), then 32-bit ARM's.
func privArchSyscalls() []privSyscalls {
	return []privSyscalls{{arch: 0xc00000b7, // AUDIT_ARCH_AARCH64
		mode:    map[uint32]int{52: 1, 53: 2, 452: 2, 56: 3}, // fchmod fchmodat fchmodat2 openat
		mknod:   map[uint32]int{33: 2},                       // mknodat
		refused: []uint32{437, 425, 426, 427},                // openat2, io_uring_setup, _enter, _register
	}, {arch: 0x40000028, // AUDIT_ARCH_ARM
		mode:    map[uint32]int{15: 1, 94: 1, 333: 2, 452: 2, 5: 2, 322: 3, 8: 1},
		mknod:   map[uint32]int{14: 1, 324: 2},
		refused: []uint32{437, 425, 426, 427},
	}}
}

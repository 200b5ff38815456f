package launcher

// privArchSyscalls: amd64's own calls (and x32's, the same numbers with
// x32Bit), then i386's through int 0x80.
func privArchSyscalls() []privSyscalls {
	mode := map[uint32]int{90: 1, 91: 1, 268: 2, 452: 2, 2: 2, 257: 3, 85: 1} // chmod fchmod fchmodat fchmodat2 open openat creat
	mknod := map[uint32]int{133: 1, 259: 2}                                   // mknod mknodat
	native := privSyscalls{arch: 0xc000003e, mode: map[uint32]int{}, mknod: map[uint32]int{},
		// openat2, io_uring_setup, io_uring_enter, io_uring_register
		refused: []uint32{437, 437 | x32Bit, 425, 425 | x32Bit, 426, 426 | x32Bit, 427, 427 | x32Bit}} // AUDIT_ARCH_X86_64
	for nr, arg := range mode {
		native.mode[nr], native.mode[nr|x32Bit] = arg, arg
	}
	for nr, arg := range mknod {
		native.mknod[nr], native.mknod[nr|x32Bit] = arg, arg
	}
	return []privSyscalls{native, {arch: 0x40000003, // AUDIT_ARCH_I386
		mode:    map[uint32]int{15: 1, 94: 1, 306: 2, 452: 2, 5: 2, 295: 3, 8: 1},
		mknod:   map[uint32]int{14: 1, 297: 2},
		refused: []uint32{437, 425, 426, 427},
	}}
}

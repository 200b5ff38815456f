package launcher

// x32 calls are amd64 calls with this bit set in their number.
const x32Bit = 0x40000000

// archSyscalls: amd64's own calls (and x32's), then i386's through int 0x80.
func archSyscalls() []syscallSet {
	return []syscallSet{
		// AUDIT_ARCH_X86_64; x32's sendmsg and sendmmsg have numbers of their own
		// (518, 538).
		{arch: 0xc000003e, socket: []uint32{41, 41 | x32Bit}, ioUring: []uint32{425, 425 | x32Bit},
			sendmsg: []uint32{46, 46 | x32Bit, 518 | x32Bit}, send: []uint32{44, 44 | x32Bit, 307, 307 | x32Bit, 538 | x32Bit}},
		// AUDIT_ARCH_I386
		{arch: 0x40000003, socket: []uint32{359}, socketcall: []uint32{102}, ioUring: []uint32{425},
			sendmsg: []uint32{370}, send: []uint32{369, 345}},
	}
}

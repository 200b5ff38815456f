package launcher

// x32 calls are amd64 calls with this bit set in their number.
const x32Bit = 0x40000000

// archSyscalls: amd64's own calls (and x32's), then i386's through int 0x80.
func archSyscalls() []syscallSet {
	return []syscallSet{
		{arch: 0xc000003e, socket: []uint32{41, 41 | x32Bit}, ioUring: []uint32{425, 425 | x32Bit}},  // AUDIT_ARCH_X86_64
		{arch: 0x40000003, socket: []uint32{359}, socketcall: []uint32{102}, ioUring: []uint32{425}}, // AUDIT_ARCH_I386
	}
}

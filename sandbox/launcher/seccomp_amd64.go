package launcher

// x32 calls are amd64 calls with this bit set in their number.
const x32Bit = 0x40000000

// archSyscalls: amd64's own calls (and x32's), then i386's through int 0x80.
func archSyscalls() []syscallSet {
	return []syscallSet{
		{arch: 0xc000003e, // AUDIT_ARCH_X86_64
			socket: []uint32{41, 41 | x32Bit}, ioUring: []uint32{425, 425 | x32Bit},
			connect: []uint32{42, 42 | x32Bit}, sendto: []uint32{44, 44 | x32Bit},
			sendmsg: []uint32{46, 518 | x32Bit}, sendmmsg: []uint32{307, 538 | x32Bit}},
		{arch: 0x40000003, compat: true, // AUDIT_ARCH_I386
			socket: []uint32{359}, socketcall: []uint32{102}, ioUring: []uint32{425},
			connect: []uint32{362}, sendto: []uint32{369}, sendmsg: []uint32{370}, sendmmsg: []uint32{345}},
	}
}

package launcher

// archSyscalls: arm64's own calls, then 32-bit ARM's (EABI, no socketcall).
func archSyscalls() []syscallSet {
	return []syscallSet{
		{arch: 0xc00000b7, // AUDIT_ARCH_AARCH64
			socket: []uint32{198}, ioUring: []uint32{425},
			connect: []uint32{203}, sendto: []uint32{206}, sendmsg: []uint32{211}, sendmmsg: []uint32{269}},
		{arch: 0x40000028, compat: true, // AUDIT_ARCH_ARM
			socket: []uint32{281}, ioUring: []uint32{425},
			connect: []uint32{283}, sendto: []uint32{290}, sendmsg: []uint32{296}, sendmmsg: []uint32{374}},
	}
}

package launcher

// archSyscalls: arm64's own calls, then 32-bit ARM's (EABI, no socketcall).
func archSyscalls() []syscallSet {
	return []syscallSet{
		{arch: 0xc00000b7, socket: []uint32{198}, ioUring: []uint32{425}}, // AUDIT_ARCH_AARCH64
		{arch: 0x40000028, socket: []uint32{281}, ioUring: []uint32{425}}, // AUDIT_ARCH_ARM
	}
}

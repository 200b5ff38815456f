package launcher

// fileSyscalls: amd64's creating calls (and x32's, the same numbers with
// x32Bit), then i386's.
func fileSyscalls() []fileSet {
	native := map[string][]uint32{
		"open": {2}, "openat": {257}, "creat": {85}, "openat2": {437}, "mkdir": {83}, "mkdirat": {258},
		"mknod": {133}, "mknodat": {259}, "rename": {82}, "renameat": {264}, "renameat2": {316},
		"link": {86}, "linkat": {265}, "symlink": {88}, "symlinkat": {266}, "truncate": {76}, "bind": {49},
	}
	for name, nrs := range native {
		native[name] = append(nrs, nrs[0]|x32Bit)
	}
	return []fileSet{
		{arch: 0xc000003e, calls: native},
		{arch: 0x40000003, deny: []uint32{193}, calls: map[string][]uint32{
			"open": {5}, "openat": {295}, "creat": {8}, "openat2": {437}, "mkdir": {39}, "mkdirat": {296},
			"mknod": {14}, "mknodat": {297}, "rename": {38}, "renameat": {302}, "renameat2": {353},
			"link": {9}, "linkat": {303}, "symlink": {83}, "symlinkat": {304}, "truncate": {92}, "bind": {361},
		}},
	}
}

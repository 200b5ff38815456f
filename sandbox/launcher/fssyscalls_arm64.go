package launcher

// fileSyscalls: arm64's creating calls (it has only the *at ones), then
// 32-bit ARM's (EABI).
func fileSyscalls() []fileSet {
	return []fileSet{
		{arch: 0xc00000b7, calls: map[string][]uint32{
			"openat": {56}, "openat2": {437}, "mkdirat": {34}, "mknodat": {33}, "renameat": {38},
			"renameat2": {276}, "linkat": {37}, "symlinkat": {36}, "truncate": {45}, "bind": {200},
		}},
		{arch: 0x40000028, deny: []uint32{193}, calls: map[string][]uint32{
			"open": {5}, "openat": {322}, "creat": {8}, "openat2": {437}, "mkdir": {39}, "mkdirat": {323},
			"mknod": {14}, "mknodat": {324}, "rename": {38}, "renameat": {329}, "renameat2": {382},
			"link": {9}, "linkat": {330}, "symlink": {83}, "symlinkat": {331}, "truncate": {92}, "bind": {282},
		}},
	}
}

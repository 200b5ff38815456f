package fs

import (
	"os"
	"syscall"
)

// changeTime is the file's status-change time (ctime) in nanoseconds,
// which every write to the file moves and no program can set back; 0 when
// unknown.
func changeTime(info os.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}

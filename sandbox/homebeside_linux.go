package sandbox

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// homeBeside is the walk beside the private home (launcher.BesideHome)
// that Landlock alone grants reads by, made once for many commands: kept
// while none of the directories it read has changed since (their device,
// inode, modification and change times), made again when one has. A
// directory changed within the last two seconds is not trusted to show a
// later change in its times (a file system with coarse timestamps), so
// the walk is then made again for the next command too.
type homeBeside struct {
	mu      sync.Mutex
	home    string
	entries []string
	stamps  []dirStamp
}

// dirStamp is what says that a directory's entries are as they were.
type dirStamp struct {
	path         string
	dev, ino     uint64
	mtime, ctime unix.Timespec
}

// racyWindow is how recent a directory's change may be for the walk
// over it to be kept.
const racyWindow = 2 * time.Second

// get is the walk beside home, kept or made again.
func (b *homeBeside) get(home string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.home == home && b.stamps != nil && b.fresh() {
		return b.entries
	}
	entries, walked := launcher.BesideHome(home)
	b.home, b.entries, b.stamps = home, entries, nil
	stamps := make([]dirStamp, 0, len(walked))
	now := time.Now()
	for _, d := range walked {
		st, ok := stampOf(d)
		if !ok || now.Sub(time.Unix(st.mtime.Unix())) < racyWindow || now.Sub(time.Unix(st.ctime.Unix())) < racyWindow {
			return entries // not kept: made again next time
		}
		stamps = append(stamps, st)
	}
	b.stamps = stamps
	return entries
}

// fresh reports whether every directory walked is as it was.
func (b *homeBeside) fresh() bool {
	for _, s := range b.stamps {
		if now, ok := stampOf(s.path); !ok || now != s {
			return false
		}
	}
	return true
}

func stampOf(path string) (dirStamp, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return dirStamp{}, false
	}
	return dirStamp{path: path, dev: st.Dev, ino: st.Ino, mtime: st.Mtim, ctime: st.Ctim}, true
}

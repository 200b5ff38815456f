//go:build unix && !linux

package fs_test

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// dirWatch reports changes to a directory's entries, found by polling
// (inotify is Linux's).
type dirWatch struct {
	t      *testing.T
	dir    string
	state  string
	closed atomic.Bool
}

func watchDir(t *testing.T, dir string) *dirWatch {
	w := &dirWatch{t: t, dir: dir}
	w.state = w.read()
	return w
}

// read describes the directory's entries: name, size, modification time.
func (w *dirWatch) read() string {
	entries, _ := os.ReadDir(w.dir)
	var b strings.Builder
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
		}
	}
	return b.String()
}

// next polls until the directory changes and returns 1; 0 when closed.
func (w *dirWatch) next() int {
	for !w.closed.Load() {
		if s := w.read(); s != w.state {
			w.state = s
			return 1
		}
	}
	return 0
}

func (w *dirWatch) close() { w.closed.Store(true) }

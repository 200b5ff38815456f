//go:build !linux

package sandbox

// Outside Linux no command runs sandboxed, so there is nothing to watch:
// the guard's watcher never starts (watch_linux.go says what it does).

// watcher is the Linux watcher's place in the guard.
type watcher struct{}

// watchLocked watches nothing outside Linux.
func (g *absentGuard) watchLocked() {}

// unwatchLocked has nothing to stop outside Linux.
func (g *absentGuard) unwatchLocked() {}

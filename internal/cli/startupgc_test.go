package cli

import (
	"runtime/debug"
	"testing"
)

// TestStartupGC: while serve starts the collector lets the heap grow to
// five times its live size; done puts the setting back once, and a GOGC
// above that or off is left alone. (Not parallel: the setting is the
// process's.)
func TestStartupGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct{ before, during int }{{100, 400}, {50, 400}, {800, 800}, {-1, -1}} {
		debug.SetGCPercent(c.before)
		done := startupGC()
		if got := debug.SetGCPercent(c.during); got != c.during {
			t.Errorf("GOGC %d: %d while starting, want %d", c.before, got, c.during)
		}
		done()
		if got := debug.SetGCPercent(c.before); got != c.before {
			t.Errorf("GOGC %d: %d once started, want it back", c.before, got)
		}
		// A later call changes nothing: the server's own setting stays.
		debug.SetGCPercent(c.before + 7)
		done()
		if got := debug.SetGCPercent(c.before); got != c.before+7 {
			t.Errorf("GOGC %d: a second done set %d", c.before, got)
		}
	}
}

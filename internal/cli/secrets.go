package cli

import (
	"os"
	"path/filepath"
)

// stateHome is $XDG_STATE_HOME when it is an absolute path (where chat
// keeps its conversations, a credential path to every tool); empty means
// ~/.local/state.
func stateHome() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d
	}
	return ""
}

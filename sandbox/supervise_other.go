//go:build !linux

package sandbox

import (
	"errors"
	"os"

	"github.com/agent-mcp/agent-mcp/sandbox/egress"
)

// supervisedProxy is the supervised egress mode's listener; there is
// none outside Linux.
type supervisedProxy struct{ port int }

func newSupervisedProxy() (*supervisedProxy, error) {
	return nil, errors.New("the supervised egress proxy needs Linux")
}

// supervise has no listener to receive outside Linux.
func supervise(ctl *os.File, _ *supervisedProxy, _ *egress.Handler, _ bool) { ctl.Close() }

package sandbox

import (
	"os"

	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// ProtectServer makes this process, the server, not dumpable: its
// /proc/PID entries (fd, environ, mem) then need CAP_SYS_PTRACE to open,
// which no command holds, so no command reaches the server's descriptors
// or environment even where no Landlock domain keeps it from ptrace
// access. A server that is not root and uses the namespaces layer stays
// dumpable: it writes each launcher's user namespace maps, which a
// process that is not dumpable makes root's, and there a command sees
// only its own PID namespace in /proc. Root's server (and one without a
// sandbox) is made undumpable at once, another once the layers are known,
// in the background, so that start-up does not wait for the probe (nor
// starts it: see [Sandbox.StartProbe]).
func (s *Sandbox) ProtectServer() error {
	if s == nil || os.Getuid() == 0 {
		return launcher.Undumpable()
	}
	go func() {
		if s.probed != nil {
			<-s.probed
		}
		if !s.layers.Namespaces {
			_ = launcher.Undumpable() // prctl(PR_SET_DUMPABLE) fails only on a bad argument
		}
	}()
	return nil
}

// UnconfinedNotice is the line the model is shown (in Bash's description,
// each Bash result and the server's instructions) when the machine offers
// no sandbox layer and commands run unconfined.
const UnconfinedNotice = "Note: Bash commands run unconfined here: this machine offers no kernel sandbox (agent-mcp sandbox check says why)."

// Unconfined reports whether the sandbox was wanted but the machine
// offers no layer, so commands run unconfined (--sandbox off is the
// operator's choice and is not reported). With Landlock it answers at
// once; without, it waits for the namespaces probe.
func (s *Sandbox) Unconfined() bool { return s != nil && s.landlock == 0 && !s.Layers().Any() }

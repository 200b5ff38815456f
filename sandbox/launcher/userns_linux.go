package launcher

import (
	"fmt"
	"os"
)

// maxUserNamespaces is the limit on user namespaces made beneath init's
// own, as init sees it (its user namespace's copy of the sysctl).
const maxUserNamespaces = "/proc/sys/user/max_user_namespaces"

// refuseUserNamespaces limits the user namespaces that can be made
// beneath init's own to one: the command's, which init makes next. A
// user namespace the command tries to make (unshare -U) then fails with
// "No space left on device" (ENOSPC): it would give the command
// capabilities over a mount namespace of its own, where it could try to
// move the sandbox's masks aside. The limit is per user namespace, so
// it binds the command and everything it starts, and leaves the host
// alone. init writes it after mounting the PID namespace's /proc.
func refuseUserNamespaces(p Plan) error {
	if p.AllowUserNS || !p.Namespaces {
		return nil
	}
	limit := "1\n"
	if !nestedUserNS(p) {
		// Root's command stays in init's user namespace: it makes none.
		limit = "0\n"
	}
	if err := os.WriteFile(maxUserNamespaces, []byte(limit), 0); err != nil {
		return fmt.Errorf("limiting user namespaces: %w", err)
	}
	return nil
}

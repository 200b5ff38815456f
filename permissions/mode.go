package permissions

import (
	"fmt"
	"strings"
)

// Mode is a session's permission mode.
type Mode string

// The permission modes, as Claude Code names them.
const (
	// ModeDefault asks for anything the rules do not allow.
	ModeDefault Mode = "default"
	// ModeAcceptEdits allows file edits inside the working directories without asking.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan allows read-only tools only.
	ModePlan Mode = "plan"
	// ModeDontAsk denies anything that is not explicitly allowed.
	ModeDontAsk Mode = "dontAsk"
	// ModeBypassPermissions allows everything but deny rules.
	ModeBypassPermissions Mode = "bypassPermissions"
)

// Modes lists every valid mode, in documentation order.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions}

// ParseMode returns the mode named s, or an error listing the valid names.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown permission mode %q: expected one of %s", s, strings.Join(names, ", "))
}

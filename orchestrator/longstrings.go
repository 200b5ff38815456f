package orchestrator

import (
	"github.com/agent-mcp/agent-mcp/internal/largeargs"
)

// Inputs over longInputBytes are validated with their long string values
// (a Write's content) left out of the decoded copy: the walk sees a
// placeholder (package largeargs) and checks the string's type and length
// on its JSON text, so validation does not build a second full copy of
// the input beside the one the tool decodes.
const (
	longInputBytes  = 64 << 10
	longStringBytes = 4 << 10
)

// withoutLongStrings returns raw with every string value (not member
// names) longer than longStringBytes replaced by a placeholder, and the
// strings taken out (nil when none was). Small inputs, and inputs with an
// unterminated string (left for the decoder to refuse), come back
// unchanged.
func withoutLongStrings(raw []byte) ([]byte, *largeargs.Strings) {
	if len(raw) <= longInputBytes {
		return raw, nil
	}
	short, long, ok := largeargs.TakeStrings(raw, longStringBytes, false)
	if !ok || long.Len() == 0 {
		return raw, nil
	}
	return short, long
}

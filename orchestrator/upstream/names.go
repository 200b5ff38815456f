package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolName is the longest tool name providers accept.
const maxToolName = 64

// sanitize keeps [A-Za-z0-9_-] and replaces anything else with '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToolName is the pool name of an upstream tool: mcp__<server>__<tool>,
// with characters providers refuse replaced by '_' and cut to 64
// characters. taken holds names already given; a name that collides (after
// cutting or replacing) gets a short hash of the original names instead of
// its tail, so every tool keeps a distinct name. The chosen name is added
// to taken.
func ToolName(server, tool string, taken map[string]bool) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= maxToolName && !taken[name] {
		taken[name] = true
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	for n := 8; n <= 2*len(sum); n += 4 {
		suffix := "_" + hex.EncodeToString(sum[:])[:n]
		head := name
		if len(head) > maxToolName-len(suffix) {
			head = head[:maxToolName-len(suffix)]
		}
		cand := head + suffix
		if !taken[cand] {
			taken[cand] = true
			return cand
		}
	}
	// Unreachable in practice: 64 hex digits of SHA-256 collide never.
	taken[name] = true
	return name
}

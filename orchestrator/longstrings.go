package orchestrator

import (
	"encoding/json"
	"strconv"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Inputs over longInputBytes are validated with their long string values
// (a Write's content) left out of the decoded copy: the walk sees a short
// placeholder and checks the string's type and length on its JSON text, so
// validation does not build a second full copy of the input beside the one
// the tool decodes.
const (
	longInputBytes  = 64 << 10
	longStringBytes = 4 << 10
)

// longString is a string value left out of the decoded copy: its JSON text
// (with the quotes) and its length in characters.
type longString struct {
	raw   []byte
	runes int
}

// longStrings maps each placeholder to the string it stands for; nil when
// none was left out.
type longStrings map[string]longString

// value decodes the string a placeholder stands for, for the checks that
// need its text (enums, patterns, formats).
func (ls longString) value() any {
	var s string
	if json.Unmarshal(ls.raw, &s) != nil {
		return ""
	}
	return s
}

// withoutLongStrings returns raw with every string value (not member
// names) longer than longStringBytes replaced by a placeholder, and what
// each placeholder stands for. Placeholders carry a random prefix made
// per call, so no input can spell one. Small inputs, and inputs with an
// unterminated string (left for the decoder to refuse), come back
// unchanged.
func withoutLongStrings(raw []byte) ([]byte, longStrings) {
	if len(raw) <= longInputBytes {
		return raw, nil
	}
	prefix := "\x00long-" + tools.RandomID()[:16] + "-"
	var long longStrings
	out, ok := tools.ReplaceLongStrings(raw, longStringBytes, func(text []byte, name bool) []byte {
		if name {
			return text
		}
		if long == nil {
			long = longStrings{}
		}
		key := prefix + strconv.Itoa(len(long))
		long[key] = longString{raw: text, runes: tools.JSONStringRunes(text[1 : len(text)-1])}
		k, _ := json.Marshal(key)
		return k
	})
	if !ok {
		return raw, nil
	}
	return out, long
}

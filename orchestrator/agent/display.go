package agent

import (
	"encoding/json"
	"strings"
)

// keyArgs are the arguments that best describe a call, in order of
// preference.
var keyArgs = []string{"command", "file_path", "notebook_path", "path", "pattern", "url", "query", "description", "prompt", "text"}

// KeyArgument picks the argument that best describes a call for a one-line
// display (Bash's command, Read's file_path, ...), cut to 80 characters.
func KeyArgument(input json.RawMessage) string {
	var args map[string]any
	if err := json.Unmarshal(input, &args); err != nil || len(args) == 0 {
		return ""
	}
	pick := ""
	for _, k := range keyArgs {
		if s, ok := args[k].(string); ok && s != "" {
			pick = s
			break
		}
	}
	if pick == "" {
		b, _ := json.Marshal(args)
		pick = string(b)
	}
	pick = strings.Join(strings.Fields(pick), " ")
	if r := []rune(pick); len(r) > 80 {
		pick = string(r[:79]) + "…"
	}
	return pick
}

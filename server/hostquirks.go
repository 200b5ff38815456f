package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// hostInjectedParams are parameters a known MCP host adds to every tool's
// input schema and to every call, whatever the server declared. They are
// dropped from a call's arguments before validation, so the call runs as
// if the host had not added them; any other parameter a tool does not
// declare is still refused with an error naming it.
//
//   - wait_for_previous: Gemini CLI (0.61) adds this boolean to every tool
//     it offers the model, and its system prompt tells the model it must
//     set it (true: wait for the previous call to finish first). The CLI
//     forwards it unchanged, so without this every call from Gemini CLI
//     that sets it would fail. agent-mcp already runs a session's calls in
//     a safe order (concurrency-safe calls in parallel, the rest one at a
//     time), so the hint has nothing to add.
var hostInjectedParams = []string{"wait_for_previous"}

// withoutHostParams removes hostInjectedParams from a call's arguments
// unless the tool's own schema declares them (declared is the set of its
// top-level properties). Arguments that are not a JSON object are
// returned as they are, for validation to refuse.
func withoutHostParams(args json.RawMessage, declared map[string]bool) json.RawMessage {
	found := false
	for _, p := range hostInjectedParams {
		if !declared[p] && bytes.Contains(args, []byte(p)) {
			found = true
		}
	}
	if !found {
		return args
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return args
	}
	removed := false
	for _, p := range hostInjectedParams {
		if _, ok := obj[p]; ok && !declared[p] {
			delete(obj, p)
			removed = true
		}
	}
	if !removed {
		return args
	}
	// Rebuilt by hand so the remaining values keep their exact bytes.
	keys := slices.Sorted(maps.Keys(obj))
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(obj[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

package largeargs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// heldOver is the size over which a tools/call's arguments are held aside
// by the transport rather than decoded by the MCP SDK, which would decode
// the params several times over (for _meta and for the call, over HTTP
// the whole body too), each time buffering the content anew.
const heldOver = 64 << 10

// MetaKey is the _meta key that carries the placeholder of a call's held
// arguments from the transport to the server's middleware.
const MetaKey = "agent-mcp/heldArguments"

// Store holds the large arguments of tools/calls that a transport read,
// by placeholder, until the call takes them or the transport drops them.
// Each is bound to an owner (the HTTP POST that carried it, "" on stdio):
// only a call of that owner takes it, so a placeholder named by any other
// request finds nothing, even if it leaked. The zero Store is empty and
// ready.
type Store struct {
	m sync.Map // placeholder → *held
}

type held struct {
	args  []byte
	owner string
}

// Hold keeps args (not copied) for owner, under a placeholder of its own,
// which it returns.
func (s *Store) Hold(args []byte, owner string) string {
	p := newPrefix() + "0"
	s.m.Store(p, &held{args: args, owner: owner})
	return p
}

// Take returns the arguments held under the placeholder p and drops them,
// when owner is theirs; otherwise it reports false and leaves them for
// their own call.
func (s *Store) Take(p, owner string) ([]byte, bool) {
	v, ok := s.m.Load(p)
	if !ok || v.(*held).owner != owner || !s.m.CompareAndDelete(p, v) {
		return nil, false
	}
	return v.(*held).args, true
}

// Drop drops the arguments held under p, if any are.
func (s *Store) Drop(p string) { s.m.Delete(p) }

// Len is how many arguments are held.
func (s *Store) Len() int {
	n := 0
	s.m.Range(func(any, any) bool { n++; return true })
	return n
}

// HoldParams takes a tools/call's large arguments out of its params p (a
// valid JSON object) and holds them for owner: it returns the edits that
// put empty arguments in their place and the placeholder in _meta, at
// offsets into p moved on by base (where p starts in the buffer edited),
// and the placeholder. The arguments held are a slice of p, no copy. ok
// is false, and nothing is held, when the arguments are small or not an
// object, or _meta is not an object: the SDK then sees the call as sent.
func (s *Store) HoldParams(p []byte, base int, owner string) (edits []Edit, placeholder string, ok bool) {
	if len(p) <= heldOver || p[0] != '{' {
		return nil, "", false
	}
	m := Members(p)
	at, ok := m["arguments"]
	if !ok || at[1]-at[0] <= heldOver || p[at[0]] != '{' {
		return nil, "", false
	}
	edits = []Edit{{At: base + at[0], End: base + at[1], Text: "{}"}}
	var mark func(string) string
	if metaAt, ok := m["_meta"]; ok {
		meta := p[metaAt[0]:metaAt[1]]
		if meta[0] != '{' {
			return nil, "", false // not an object: left for the SDK to refuse
		}
		// At the end, so that it is the one read if the client sent the
		// name too (the last of a repeated name wins).
		at := base + metaAt[1] - 1
		sep := ""
		if len(bytes.TrimSpace(meta[1:len(meta)-1])) > 0 {
			sep = ","
		}
		mark = func(p string) string { return fmt.Sprintf("%s%q:%q", sep, MetaKey, p) }
		edits = append(edits, Edit{At: at, End: at})
	} else {
		mark = func(p string) string { return fmt.Sprintf(`"_meta":{%q:%q},`, MetaKey, p) }
		edits = append(edits, Edit{At: base + 1, End: base + 1})
	}
	placeholder = s.Hold(p[at[0]:at[1]:at[1]], owner)
	edits[1].Text = mark(placeholder)
	return edits, placeholder, true
}

// HoldBody holds aside the large arguments of the tools/call a request
// body carries (one JSON-RPC message; a batch is left whole) for owner:
// it returns the body to hand the SDK, and the placeholder the arguments
// are held under ("" when none are: the body is returned as it came). The
// caller drops the placeholder once the request is served.
func (s *Store) HoldBody(body []byte, owner string) ([]byte, string) {
	i := skipSpace(body, 0)
	if len(body)-i <= heldOver || body[i] != '{' || !json.Valid(body) {
		return body, ""
	}
	m := Members(body)
	method, ok := m["method"]
	if !ok || body[method[0]] != '"' || jsonName(body[method[0]:method[1]]) != "tools/call" {
		return body, ""
	}
	at, ok := m["params"]
	if !ok {
		return body, ""
	}
	edits, placeholder, ok := s.HoldParams(body[at[0]:at[1]], at[0], owner)
	if !ok {
		return body, ""
	}
	return Apply(body, edits), placeholder
}

// Edit replaces b[At:End] with Text.
type Edit struct {
	At, End int
	Text    string
}

// Apply is b with the edits (not overlapping) made, in a new slice.
func Apply(b []byte, edits []Edit) []byte {
	slices.SortFunc(edits, func(x, y Edit) int { return x.At - y.At })
	n := len(b)
	for _, e := range edits {
		n += len(e.Text) - (e.End - e.At)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range edits {
		out = append(out, b[last:e.At]...)
		out = append(out, e.Text...)
		last = e.End
	}
	return append(out, b[last:]...)
}

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// A tools/call's large arguments are held aside by the transport that read
// them (stdioConn for a stdio line, the HTTP guard for a request body):
// the message the SDK decodes carries empty arguments and, in _meta, the
// token the arguments are held under in Server.held; the heldArguments
// middleware puts them back before anything else sees the call. The SDK
// would otherwise decode the params several times over (for _meta and
// for the call, over HTTP the whole body too), each time buffering the
// content anew.

// heldArgumentsOver is the size over which a tools/call's arguments are
// held aside by the transport rather than decoded by the SDK.
const heldArgumentsOver = 64 << 10

// heldArgs are a call's arguments held aside, with the tag of the HTTP
// POST that carried them ("" on stdio): only a call of that POST takes
// them, so a token named by any other request (another principal's or
// session's) finds nothing, even if it leaked.
type heldArgs struct {
	args json.RawMessage
	post string
}

// heldMetaKey is the _meta key that carries the token of a call's held
// arguments from the transport to the server's heldArguments middleware.
const heldMetaKey = "agent-mcp/heldArguments"

// holdEdits says how to take a tools/call's large arguments out of its
// params p (a JSON object, valid): the edits that put empty arguments in
// their place and the token in _meta, at offsets into p moved on by base
// (where p starts in the buffer edited), the arguments (a slice of p, no
// copy) and the token to hold them under. ok is false when the arguments
// are small or not an object, or _meta is not an object: the SDK then
// sees the call as sent.
func holdEdits(p []byte, base int) (edits []edit, args []byte, token string, ok bool) {
	if len(p) <= heldArgumentsOver || p[0] != '{' {
		return nil, nil, "", false
	}
	m := memberSpans(p)
	at, ok := m["arguments"]
	if !ok || at[1]-at[0] <= heldArgumentsOver || p[at[0]] != '{' {
		return nil, nil, "", false
	}
	args = p[at[0]:at[1]:at[1]]
	token = tools.RandomID()
	mark := fmt.Sprintf("%q:%q", heldMetaKey, token)
	edits = []edit{{at: base + at[0], end: base + at[1], text: "{}"}}
	if metaAt, ok := m["_meta"]; ok {
		meta := p[metaAt[0]:metaAt[1]]
		if meta[0] != '{' {
			return nil, nil, "", false // not an object: left for the SDK to refuse
		}
		// At the end, so that it is the one read if the client sent the
		// name too (the last of a repeated name wins).
		at := base + metaAt[1] - 1
		if len(bytes.TrimSpace(meta[1:len(meta)-1])) > 0 {
			mark = "," + mark
		}
		edits = append(edits, edit{at: at, end: at, text: mark})
	} else {
		edits = append(edits, edit{at: base + 1, end: base + 1, text: `"_meta":{` + mark + `},`})
	}
	return edits, args, token, true
}

// holdBodyArguments holds aside the large arguments of the tools/call a
// request body carries (one JSON-RPC message; a batch is left whole):
// it returns the body to hand the SDK, and the token the arguments are
// held under ("" when none are: the body is returned as it came). The
// caller drops the token (Server.held.Delete) once the request is served.
// post is the POST's tag (requestFacts.post).
func (s *Server) holdBodyArguments(body []byte, post string) ([]byte, string) {
	i := skipSpace(body, 0)
	if len(body)-i <= heldArgumentsOver || body[i] != '{' || !json.Valid(body) {
		return body, ""
	}
	m := memberSpans(body)
	method, ok := m["method"]
	if !ok || body[method[0]] != '"' || jsonName(body[method[0]:method[1]]) != "tools/call" {
		return body, ""
	}
	at, ok := m["params"]
	if !ok {
		return body, ""
	}
	edits, args, token, ok := holdEdits(body[at[0]:at[1]], at[0])
	if !ok {
		return body, ""
	}
	s.held.Store(token, &heldArgs{args: args, post: post})
	return applyEdits(body, edits), token
}

// edit replaces b[at:end] with text.
type edit struct {
	at, end int
	text    string
}

// applyEdits is b with the edits (not overlapping) made, in a new slice.
func applyEdits(b []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(x, y edit) int { return x.at - y.at })
	n := len(b)
	for _, e := range edits {
		n += len(e.text) - (e.end - e.at)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range edits {
		out = append(out, b[last:e.at]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, b[last:]...)
}

// heldArguments puts back the arguments a transport held aside (see
// holdEdits), before any other middleware or the tool sees the call.
func (s *Server) heldArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if !ok || p.Meta == nil {
			return next(ctx, method, req)
		}
		token, ok := p.Meta[heldMetaKey].(string)
		if !ok {
			return next(ctx, method, req)
		}
		delete(p.Meta, heldMetaKey)
		if len(p.Meta) == 0 {
			p.Meta = nil
		}
		// Taken only by a call of the POST that carried it: a request
		// naming it from anywhere else leaves it for the right one.
		v, ok := s.held.Load(token)
		held, _ := v.(*heldArgs)
		if !ok || held.post != postTagOf(req) || !s.held.CompareAndDelete(token, v) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: _meta %q names no arguments held for this call", heldMetaKey)}
		}
		p.Arguments = held.args
		return next(ctx, method, req)
	}
}

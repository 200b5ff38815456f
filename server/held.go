package server

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
)

// A tools/call's large arguments are held aside by the transport that read
// them (stdioConn for a stdio line, the HTTP guard for a request body) in
// Server.held, a largeargs.Store: the message the SDK decodes carries
// empty arguments and, in _meta (largeargs.MetaKey), the placeholder the
// arguments are held under; the heldArguments middleware puts them back
// before anything else sees the call. Arguments held for an HTTP POST are
// bound to its tag (requestFacts.post), those read on stdio to "".

// heldArguments puts back the arguments a transport held aside, before
// any other middleware or the tool sees the call.
func (s *Server) heldArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if !ok || p.Meta == nil {
			return next(ctx, method, req)
		}
		placeholder, ok := p.Meta[largeargs.MetaKey].(string)
		if !ok {
			return next(ctx, method, req)
		}
		delete(p.Meta, largeargs.MetaKey)
		if len(p.Meta) == 0 {
			p.Meta = nil
		}
		// Taken only by a call of the POST that carried it: a request
		// naming it from anywhere else leaves it for the right one.
		args, ok := s.held.Take(placeholder, postTagOf(req))
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: _meta %q names no arguments held for this call", largeargs.MetaKey)}
		}
		p.Arguments = args
		return next(ctx, method, req)
	}
}

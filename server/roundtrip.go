package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Multi round-trip tool calls (SEP-2322).
//
// From protocol version 2026-07-28 on, a server may not send elicitation or
// sampling requests while it serves a tools/call: it answers the call with
// an input-required result carrying the requests, and the client retries
// the call with the responses and the opaque requestState. Our tools ask
// in the middle of their work (a permission prompt, AskUserQuestion, a
// sub-agent's model turn), so the call keeps running in a goroutine across
// the round trips: roundTrip parks it when it needs input, returns the
// input-required result, and resumes it when the retry brings the answer.
// Clients on older protocol versions are asked directly, as before.

// pendingAbandon is how long a parked call waits for the client's retry
// before it is cancelled.
const pendingAbandon = 30 * time.Minute

// roundTripVersion is the first protocol version with multi round-trips.
const roundTripVersion = "2026-07-28"

type inputEvent struct {
	id  string
	req mcp.InputRequest
}

type inputAnswer struct {
	resp mcp.InputResponse
	err  error
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// pendingCall is a tools/call running across round trips.
type pendingCall struct {
	// parked is the server's map of requestState tokens to parked calls
	// (Server.pending). Tokens are 128 random bits bound to their caller.
	parked *sync.Map
	// caller is whom the call belongs to (callerOf): its protocol
	// session, or its principal when requests carry no session (over HTTP
	// each round trip then arrives in a throwaway MCP session).
	caller  any
	cancel  context.CancelFunc
	inputs  chan inputEvent  // the call needs input
	answers chan inputAnswer // the client's answer to the current input
	done    chan callOutcome // the call's result
	askMu   sync.Mutex       // one input request at a time
	mu      sync.Mutex
	next    int    // numbers input request ids
	waiting string // id of the input request awaiting an answer
}

type pendingKey struct{}

func clientRoundTrips(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= roundTripVersion
}

// roundTrip wraps a tool handler so that, for clients that need it, the
// handler's requests for input travel as input-required results.
func (s *Server) roundTrip(h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Session == nil || !clientRoundTrips(req.Session) {
			return h(ctx, req)
		}
		if token := req.Params.RequestState; token != "" {
			// Taken only by its own caller: a retry from anyone else
			// leaves the call parked for the right one.
			v, ok := s.pending.Load(token)
			pc, _ := v.(*pendingCall)
			if !ok || pc.caller != callerOf(req) || !s.pending.CompareAndDelete(token, pc) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: "requestState is unknown or expired: the call it belonged to has ended; call the tool again"}
			}
			pc.mu.Lock()
			id := pc.waiting
			pc.mu.Unlock()
			if resp, ok := req.Params.InputResponses[id]; ok {
				pc.answers <- inputAnswer{resp: resp}
			} else {
				pc.answers <- inputAnswer{err: fmt.Errorf("the client retried without answering input request %q", id)}
			}
			return pc.await(ctx)
		}
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		pc := &pendingCall{
			parked: &s.pending, caller: callerOf(req), cancel: cancel,
			inputs: make(chan inputEvent), answers: make(chan inputAnswer, 1), done: make(chan callOutcome, 1),
		}
		go func() {
			res, err := h(context.WithValue(cctx, pendingKey{}, pc), req)
			pc.done <- callOutcome{res, err}
		}()
		return pc.await(ctx)
	}
}

// await waits for the call to finish or to need input. Input parks the
// call under a fresh token and becomes an input-required result.
func (pc *pendingCall) await(ctx context.Context) (*mcp.CallToolResult, error) {
	select {
	case out := <-pc.done:
		pc.cancel()
		return out.res, out.err
	case in := <-pc.inputs:
		token := tools.RandomID()
		pc.mu.Lock()
		pc.waiting = in.id
		pc.mu.Unlock()
		pc.parked.Store(token, pc)
		time.AfterFunc(pendingAbandon, func() {
			if _, ok := pc.parked.LoadAndDelete(token); ok {
				pc.cancel()
			}
		})
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{in.id: in.req}, RequestState: token}, nil
	case <-ctx.Done():
		pc.cancel()
		return nil, ctx.Err()
	}
}

// ask sends one input request through the call's round trips and waits for
// the client's answer.
func (pc *pendingCall) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	pc.askMu.Lock()
	defer pc.askMu.Unlock()
	pc.mu.Lock()
	pc.next++
	id := fmt.Sprintf("input-%d", pc.next)
	pc.mu.Unlock()
	select {
	case pc.inputs <- inputEvent{id: id, req: req}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-pc.answers:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// viaRoundTrip sends req as an input request when the call runs across
// round trips; handled is false when it does not (ask the client directly).
func viaRoundTrip(ctx context.Context, req mcp.InputRequest) (resp mcp.InputResponse, handled bool, err error) {
	pc, ok := ctx.Value(pendingKey{}).(*pendingCall)
	if !ok {
		return nil, false, nil
	}
	resp, err = pc.ask(ctx, req)
	return resp, true, err
}

// elicitRoundTrip elicits through the round trips when the call runs
// across them.
func elicitRoundTrip(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, bool, error) {
	resp, handled, err := viaRoundTrip(ctx, params)
	if !handled || err != nil {
		return nil, handled, err
	}
	res, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return nil, true, fmt.Errorf("the client answered an elicitation with %T", resp)
	}
	return res, true, nil
}

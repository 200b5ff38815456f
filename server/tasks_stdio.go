package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
	"github.com/agent-mcp/agent-mcp/tools"
)

// The Tasks extension over stdio (see tasks.go). The stdio connection is
// the task layer's JSON-RPC layer: Read hands it every message the client
// sent (take), Write every response go-sdk makes (route).
//
//   - tasks/get, tasks/update and tasks/cancel are answered here.
//   - A tools/call whose per-request capabilities name the extension is
//     noted and passed on; its response, when it comes within the tool's
//     inline window, goes to the client as it is. When the window passes
//     first, the client is answered with a CreateTaskResult under the
//     call's id and the response, when it comes, is the task's.
//   - subscriptions/listen naming taskIds is served here as over HTTP
//     (tasks_listen.go): its notifications and its result are lines on
//     stdout carrying the subscription id (the listen's request id);
//     notifications/cancelled for the listen ends it.
//   - tasks/update retries the call as a request of the server's own (an
//     id the client never sees) read in after the client's messages;
//     tasks/cancel cancels the call in flight with notifications/cancelled
//     read in the same way, which cancels the tool's context.
//
// The tasks belong to the connection: a stdio session is its process's
// only client.

// metaTaskInline is the _meta key by which the stdio layer tells the tool
// handler how long the call runs before it becomes a task (over HTTP the
// request's facts carry it). The layer removes it from what the client
// sends.
const metaTaskInline = "agent-mcp/taskInline"

// stdioTasks is a stdio connection's task layer.
type stdioTasks struct {
	s     *Server
	c     *stdioConn
	owner string

	mu    sync.Mutex
	calls map[jsonrpc.ID]*stdioTaskCall
	// listens are the open task subscriptions, by their request id
	// (fmt.Sprint of its value, as notifications/cancelled names it).
	listens map[string]chan struct{}
}

// stdioTaskCall is a tools/call the task layer follows: in its inline
// window until tasked is set; then its response goes to outcome.
type stdioTaskCall struct {
	policy  TaskPolicy
	listed  bool
	params  json.RawMessage // for a retry
	tasked  bool
	outcome chan taskOutcome
}

func newStdioTasks(s *Server, c *stdioConn) *stdioTasks {
	return &stdioTasks{s: s, c: c, owner: fmt.Sprintf("stdio %p", c), calls: map[jsonrpc.ID]*stdioTaskCall{},
		listens: map[string]chan struct{}{}}
}

// take looks at a message the client sent; it reports whether the task
// layer answered it (the message goes no further).
func (st *stdioTasks) take(msg jsonrpc.Message) (jsonrpc.Message, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if ok && req.Method == "notifications/cancelled" {
		st.cancelListen(req.Params)
	}
	if !ok || !req.IsCall() {
		return msg, false
	}
	st.mu.Lock()
	_, ours := st.calls[req.ID]
	st.mu.Unlock()
	if ours {
		return msg, false // a retry of the layer's own
	}
	var p taskParams
	switch {
	case strings.HasPrefix(req.Method, "tasks/"):
		if req.Method != "tasks/get" && req.Method != "tasks/update" && req.Method != "tasks/cancel" {
			return msg, false // go-sdk: method not found
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			st.reply(req.ID, nil, &taskError{code: -32602, message: "Invalid params: " + err.Error()})
			return msg, true
		}
		res, terr := st.s.taskMethod(st.owner, req.Method, p)
		st.reply(req.ID, res, terr)
		return msg, true
	case req.Method == "subscriptions/listen":
		return msg, st.listen(req)
	case req.Method != "tools/call":
		return msg, false
	}
	if bytes.Contains(req.Params, []byte(metaTaskInline)) {
		req.Params, _ = withoutMetaKey(req.Params, metaTaskInline)
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return msg, false
	}
	name := p.Name
	if t, ok := st.s.cfg.Pipeline.Pool.Find(name); ok {
		name = t.Name
	}
	policy, listed := st.s.cfg.Tasks.policy(name)
	if !acceptsTasks(p.Meta) {
		if listed && policy.Required {
			st.reply(req.ID, nil, missingTasksCapability(fmt.Sprintf("tool %q, which runs only as a task,", p.Name)))
			return msg, true
		}
		return msg, false
	}
	call := &stdioTaskCall{policy: policy, listed: listed, params: req.Params, outcome: make(chan taskOutcome, 1)}
	if listed {
		req.Params = withMeta(req.Params, metaTaskInline, policy.Inline.Milliseconds())
	}
	st.mu.Lock()
	st.calls[req.ID] = call
	st.mu.Unlock()
	if listed {
		id := req.ID
		time.AfterFunc(policy.Inline, func() { st.windowPassed(id, call) })
	}
	return req, false
}

// listen serves a subscriptions/listen that names taskIds (see
// tasks_listen.go) and reports whether it did.
func (st *stdioTasks) listen(req *jsonrpc.Request) bool {
	var lp listenParams
	if json.Unmarshal(req.Params, &lp) != nil || lp.Notifications.TaskIDs == nil {
		return false // go-sdk's
	}
	if !acceptsTasks(lp.Meta) {
		st.reply(req.ID, nil, missingTasksCapability("a listen for task status notifications"))
		return true
	}
	agreed := []string{}
	var followed []*mcpTask
	for _, id := range lp.Notifications.TaskIDs {
		if t, ok := st.s.task(st.owner, id); ok {
			agreed = append(agreed, id)
			followed = append(followed, t)
		}
	}
	key := fmt.Sprint(req.ID.Raw())
	done := make(chan struct{})
	st.mu.Lock()
	st.listens[key] = done
	st.mu.Unlock()
	subMeta := map[string]any{metaSubscriptionID: req.ID.Raw()}
	send := func(v any) bool {
		if v == nil {
			return true // stdio has no intermediary to keep awake
		}
		data, err := json.Marshal(v)
		if err == nil {
			st.c.mu.Lock()
			err = st.c.writeLine(data)
			st.c.mu.Unlock()
		}
		return err == nil
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"notifications": map[string]any{"taskIds": agreed}, "_meta": subMeta}})
	go func() {
		defer func() {
			st.mu.Lock()
			delete(st.listens, key)
			st.mu.Unlock()
		}()
		streamTasks(followed, subMeta, done, st.c.closed, send, func() {
			st.reply(req.ID, map[string]any{"resultType": "complete", "_meta": subMeta}, nil)
		})
	}()
	return true
}

// cancelListen ends the task subscription that notifications/cancelled
// names, if it is one.
func (st *stdioTasks) cancelListen(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	st.mu.Lock()
	done, ok := st.listens[fmt.Sprint(p.RequestID)]
	delete(st.listens, fmt.Sprint(p.RequestID))
	st.mu.Unlock()
	if ok {
		close(done)
	}
}

// windowPassed makes a task of a call still running after its window.
func (st *stdioTasks) windowPassed(id jsonrpc.ID, call *stdioTaskCall) {
	st.c.mu.Lock()
	defer st.c.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if call.tasked || st.calls[id] != call {
		return // answered already
	}
	call.tasked = true
	t := st.newTask(id, call)
	go t.follow(call.outcome)
	st.writeResult(id, t.wire("task", false))
}

// route takes a response go-sdk wrote; it reports whether the task layer
// kept it from the client (the call's task gets it). c.mu is held.
func (st *stdioTasks) route(resp *jsonrpc.Response) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	call, ok := st.calls[resp.ID]
	if !ok {
		return false
	}
	delete(st.calls, resp.ID)
	out := taskOutcomeOf(resp)
	if call.tasked {
		call.outcome <- out
		return true
	}
	if _, _, input := out.inputRequired(); !input || call.policy.InputFirst {
		return false
	}
	// It needs input within its window: a task in input_required.
	call.tasked = true
	first := make(chan taskOutcome, 1)
	first <- out
	t := st.newTask(resp.ID, call)
	t.follow(first)
	st.writeResult(resp.ID, t.wire("task", false))
	return true
}

// newTask makes the task of the call id; st.mu is held. A tasks/update
// retries the call under an id of the layer's own, and cancelling the task
// cancels whichever request of the call is in flight.
func (st *stdioTasks) newTask(id jsonrpc.ID, call *stdioTaskCall) *mcpTask {
	var mu sync.Mutex
	current := id
	cancel := func() {
		mu.Lock()
		inFlight := current
		mu.Unlock()
		note := &jsonrpc.Request{Method: "notifications/cancelled",
			Params: mustJSON(map[string]any{"requestId": inFlight.Raw(), "reason": "the task was cancelled or expired"})}
		go st.c.deliver(inbound{msgs: []jsonrpc.Message{note}})
	}
	t := st.s.newTask(st.owner, cancel)
	retry := func(answers map[string]json.RawMessage, state string) <-chan taskOutcome {
		rid, err := jsonrpc.MakeID("agent-mcp-task-" + tools.RandomID())
		again := &stdioTaskCall{policy: call.policy, listed: call.listed, params: call.params, tasked: true, outcome: make(chan taskOutcome, 1)}
		if err != nil {
			again.outcome <- taskOutcome{err: mustJSON(map[string]any{"code": -32603, "message": err.Error()})}
			return again.outcome
		}
		params, held := withoutMetaKey(call.params, largeargs.MetaKey)
		if held {
			// Its arguments were taken by the first request; a retry
			// resumes the parked call, which has them.
			params = withMember(params, "arguments", json.RawMessage("{}"))
		}
		params = withMember(params, "inputResponses", mustJSON(answers))
		if state != "" {
			params = withMember(params, "requestState", mustJSON(state))
		}
		if call.listed {
			params = withMeta(params, metaTaskInline, call.policy.Inline.Milliseconds())
		}
		st.mu.Lock()
		st.calls[rid] = again
		st.mu.Unlock()
		mu.Lock()
		current = rid
		mu.Unlock()
		go st.c.deliver(inbound{msgs: []jsonrpc.Message{&jsonrpc.Request{ID: rid, Method: "tools/call", Params: params}}})
		return again.outcome
	}
	t.setRetry(retry)
	return t
}

// reply answers a request the task layer took.
func (st *stdioTasks) reply(id jsonrpc.ID, res any, terr *taskError) {
	resp := &jsonrpc.Response{ID: id}
	if terr != nil {
		e := &jsonrpc.Error{Code: int64(terr.code), Message: terr.message}
		if terr.data != nil {
			e.Data = mustJSON(terr.data)
		}
		resp.Error = e
	} else {
		resp.Result = mustJSON(res)
	}
	_ = st.c.Write(context.Background(), resp)
}

// writeResult answers the call id with result; c.mu is held.
func (st *stdioTasks) writeResult(id jsonrpc.ID, result any) {
	resp := &jsonrpc.Response{ID: id, Result: mustJSON(result)}
	st.c.answer(resp)
	if data, err := jsonrpc.EncodeMessage(resp); err == nil {
		_ = st.c.writeLine(data)
	}
}

// taskOutcomeOf is a response as a task's outcome.
func taskOutcomeOf(resp *jsonrpc.Response) taskOutcome {
	if resp.Error != nil {
		var e *jsonrpc.Error
		if je, ok := resp.Error.(*jsonrpc.Error); ok {
			e = je
		} else {
			e = &jsonrpc.Error{Code: -32603, Message: resp.Error.Error()}
		}
		return taskOutcome{err: mustJSON(e)}
	}
	return taskOutcome{result: resp.Result}
}

// withMember returns the JSON object obj with member key set to v.
func withMember(obj json.RawMessage, key string, v json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	m[key] = v
	return mustJSON(m)
}

// withMeta returns params with _meta[key] set to v.
func withMeta(params json.RawMessage, key string, v any) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(params, &m)
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[key] = mustJSON(v)
	return withMember(params, "_meta", mustJSON(meta))
}

// withoutMetaKey returns params without _meta[key], and whether it was
// there.
func withoutMetaKey(params json.RawMessage, key string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return params, false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(m["_meta"], &meta) != nil {
		return params, false
	}
	if _, ok := meta[key]; !ok {
		return params, false
	}
	delete(meta, key)
	return withMember(params, "_meta", mustJSON(meta)), true
}

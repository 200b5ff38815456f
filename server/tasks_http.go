package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The Tasks extension over streamable HTTP (see tasks.go): requests of
// protocol 2026-07-28 whose Mcp-Method is tools/call or a tasks/ method
// are looked at here, before go-sdk sees them. A tools/call from a client
// that accepts tasks is served by go-sdk on a context of the task's own
// and its answer recorded (taskRecorder); tasks/get, tasks/update and
// tasks/cancel are answered here. Everything else, and every tools/call
// from a client that does not accept tasks, goes to go-sdk untouched.

// rpcPeek is what the task layer reads of a request: no copy is made of
// a tools/call's arguments, which may be large.
type rpcPeek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params taskParams      `json:"params"`
}

// prereadBody is a request body the task layer read already: readBody
// takes its bytes back instead of copying them.
type prereadBody struct {
	*bytes.Reader
	b []byte
}

func (*prereadBody) Close() error { return nil }

func preread(b []byte) *prereadBody { return &prereadBody{bytes.NewReader(b), b} }

// taskParams are the params the task layer reads.
type taskParams struct {
	Name           string                     `json:"name"`
	TaskID         json.RawMessage            `json:"taskId"`
	InputResponses json.RawMessage            `json:"inputResponses"`
	Meta           map[string]json.RawMessage `json:"_meta"`
}

// acceptsTasks reports whether a request's per-request capabilities name
// the Tasks extension.
func acceptsTasks(meta map[string]json.RawMessage) bool {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(meta[metaClientCaps], &caps) != nil {
		return false
	}
	v, ok := caps.Extensions[tasksExtension]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// serveTasks serves r when it belongs to the task layer and reports
// whether it did; when it did not, r's body is as it was.
func (h *HTTPServer) serveTasks(w http.ResponseWriter, r *http.Request, principal string) bool {
	header := r.Header.Get("Mcp-Method")
	if r.Method != http.MethodPost || (header != "tools/call" && !strings.HasPrefix(header, "tasks/")) {
		return false
	}
	body, err := readBody(r, h.opt.MaxBodyBytes)
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			h.bodyTooLarge(w, "request body")
		} else {
			http.Error(w, "Bad Request: reading the request body: "+err.Error(), http.StatusBadRequest)
		}
		return true
	}
	r.Body = preread(body)
	r.ContentLength = int64(len(body))
	var msg rpcPeek
	if err := json.Unmarshal(body, &msg); err != nil {
		var bare struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &bare) == nil && strings.HasPrefix(bare.Method, "tasks/") {
			writeTaskError(w, http.StatusOK, bare.ID, -32602, "Invalid params: "+err.Error(), nil)
			return true
		}
		return false // go-sdk answers what is not one request
	}
	p := msg.Params
	if strings.HasPrefix(msg.Method, "tasks/") || strings.HasPrefix(header, "tasks/") {
		if msg.Method != header {
			writeTaskError(w, http.StatusBadRequest, msg.ID, codeHeaderMism,
				fmt.Sprintf("Header mismatch: the Mcp-Method header %q does not match the body's method %q", header, msg.Method), nil)
			return true
		}
		switch msg.Method {
		case "tasks/get", "tasks/update", "tasks/cancel":
			h.serveTaskMethod(w, r, principal, msg, p)
			return true
		}
		return false // go-sdk: method not found (tasks/result, tasks/list are gone)
	}
	if msg.Method != "tools/call" {
		return false // go-sdk refuses the header mismatch
	}
	name := p.Name
	if t, ok := h.server.cfg.Pipeline.Pool.Find(name); ok {
		name = t.Name
	}
	policy, listed := h.server.cfg.Tasks.policy(name)
	if !acceptsTasks(p.Meta) {
		if listed && policy.Required {
			e := missingTasksCapability(fmt.Sprintf("tool %q, which runs only as a task,", p.Name))
			writeTaskError(w, e.status, msg.ID, e.code, e.message, e.data)
			return true
		}
		return false
	}
	h.serveTaskCall(w, r, principal, body, msg.ID, policy, listed)
	return true
}

// serveTaskCall runs a tools/call of a client that accepts tasks: its
// answer as it is when it comes within the tool's inline window (a tool
// that is not listed has no window: only input makes it a task), else a
// CreateTaskResult.
func (h *HTTPServer) serveTaskCall(w http.ResponseWriter, r *http.Request, principal string, body, id json.RawMessage, policy TaskPolicy, listed bool) {
	h.server.principalBegin(principal)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	if _, facts := factsOfRequest(r); facts != nil && listed {
		// go-sdk hands the tool a context of its own: the mark travels
		// in the request's facts (see Server.handler).
		facts.taskInline = &policy.Inline
	}
	run := func(body []byte) *taskRecorder { return h.runRecorded(ctx, r, body) }
	rec := run(body)
	var window <-chan time.Time
	if listed {
		if policy.Inline > 0 {
			tm := time.NewTimer(policy.Inline)
			defer tm.Stop()
			window = tm.C
		} else {
			c := make(chan time.Time)
			close(c)
			window = c
		}
	}
	var first <-chan taskOutcome
	select {
	case <-rec.done:
		out := rec.outcome()
		if _, _, input := out.inputRequired(); !input || policy.InputFirst {
			rec.copyTo(w)
			cancel()
			h.server.principalEnd(principal, h.opt.SessionTimeout)
			return
		}
		c := make(chan taskOutcome, 1)
		c <- out
		first = c
	case <-window:
		first = rec.outcomes()
	case <-r.Context().Done():
		// The client left before the call became a task: it ends as any
		// call of a dropped request does.
		cancel()
		<-rec.done
		h.server.principalEnd(principal, h.opt.SessionTimeout)
		return
	}
	t := h.server.newTask(principal, cancel)
	retry := func(answers map[string]json.RawMessage, state string) <-chan taskOutcome {
		return run(withInputResponses(body, answers, state)).outcomes()
	}
	t.setRetry(retry)
	go func() {
		<-t.ended
		h.server.principalEnd(principal, h.opt.SessionTimeout)
	}()
	if len(first) > 0 {
		t.follow(first) // input_required before the client hears of the task
	} else {
		go t.follow(first)
	}
	writeTaskResult(w, id, t.wire("task", false))
}

// serveTaskMethod answers tasks/get, tasks/update and tasks/cancel.
func (h *HTTPServer) serveTaskMethod(w http.ResponseWriter, r *http.Request, principal string, msg rpcPeek, p taskParams) {
	var taskID string
	if name := r.Header.Get("Mcp-Name"); json.Unmarshal(p.TaskID, &taskID) == nil && name != taskID {
		writeTaskError(w, http.StatusBadRequest, msg.ID, codeHeaderMism,
			fmt.Sprintf("Header mismatch: the Mcp-Name header %q does not match params.taskId %q", name, taskID), nil)
		return
	}
	res, terr := h.server.taskMethod(principal, msg.Method, p)
	if terr != nil {
		writeTaskError(w, terr.status, msg.ID, terr.code, terr.message, terr.data)
		return
	}
	writeTaskResult(w, msg.ID, res)
}

// taskError is a task method's JSON-RPC error, with the HTTP status it
// goes with.
type taskError struct {
	status  int
	code    int
	message string
	data    any
}

// missingTasksCapability is the error for a request that needs the
// extension's capability and lacks it.
func missingTasksCapability(what string) *taskError {
	return &taskError{http.StatusBadRequest, codeMissingCaps,
		fmt.Sprintf("Missing required client capability: %s needs the %s extension in _meta %q", what, tasksExtension, metaClientCaps),
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}}}
}

// taskMethod answers tasks/get, tasks/update or tasks/cancel for owner.
func (s *Server) taskMethod(owner, method string, p taskParams) (any, *taskError) {
	if !acceptsTasks(p.Meta) {
		return nil, missingTasksCapability(method)
	}
	var taskID string
	if json.Unmarshal(p.TaskID, &taskID) != nil || taskID == "" {
		return nil, &taskError{http.StatusOK, -32602, "Invalid params: taskId must be a non-empty string", nil}
	}
	t, ok := s.task(owner, taskID)
	if !ok {
		return nil, &taskError{http.StatusOK, -32602, "Failed to retrieve task: Task not found (unknown, expired, or another client's)", nil}
	}
	switch method {
	case "tasks/get":
		return t.wire("complete", true), nil
	case "tasks/update":
		var responses map[string]json.RawMessage
		if json.Unmarshal(p.InputResponses, &responses) != nil || responses == nil {
			return nil, &taskError{http.StatusOK, -32602, "Invalid params: inputResponses must be an object of answers keyed by the task's inputRequests keys", nil}
		}
		t.update(responses)
	case "tasks/cancel":
		t.finish(taskCancelled, "cancelled by the client (tasks/cancel)", taskOutcome{})
	default:
		return nil, &taskError{http.StatusNotFound, -32601, "Method not found: " + method, nil}
	}
	return map[string]string{"resultType": "complete"}, nil
}

// withInputResponses returns a tools/call body with params.inputResponses
// and params.requestState set: the retry of a multi round-trip call.
func withInputResponses(body []byte, answers map[string]json.RawMessage, state string) []byte {
	var msg map[string]json.RawMessage
	var params map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return body
	}
	params["inputResponses"] = mustJSON(answers)
	if state != "" {
		params["requestState"] = mustJSON(state)
	} else {
		delete(params, "requestState")
	}
	msg["params"] = mustJSON(params)
	return mustJSON(msg)
}

// runRecorded serves a copy of r with body on ctx, recording the answer.
func (h *HTTPServer) runRecorded(ctx context.Context, r *http.Request, body []byte) *taskRecorder {
	rec := &taskRecorder{header: http.Header{}, done: make(chan struct{})}
	req := r.Clone(ctx)
	req.Body = preread(body)
	req.ContentLength = int64(len(body))
	_, facts := factsOfRequest(r)
	go func() {
		defer close(rec.done)
		h.servePOST(rec, req, h.sessionless, facts)
	}()
	return rec
}

// taskRecorder is the http.ResponseWriter go-sdk answers a task's call
// into.
type taskRecorder struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   bytes.Buffer
	done   chan struct{} // closed when the call has been answered
}

func (rw *taskRecorder) Header() http.Header { return rw.header }
func (rw *taskRecorder) WriteHeader(code int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.status == 0 {
		rw.status = code
	}
}
func (rw *taskRecorder) Write(b []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	return rw.body.Write(b)
}

// Flush is a no-op: go-sdk flushes event streams.
func (rw *taskRecorder) Flush() {}

// copyTo writes the recorded answer to w as it came.
func (rw *taskRecorder) copyTo(w http.ResponseWriter) {
	for k, v := range rw.header {
		w.Header()[k] = v
	}
	w.WriteHeader(cmpOr(rw.status, http.StatusOK))
	_, _ = w.Write(rw.body.Bytes())
}

// outcomes delivers the call's outcome once it is answered.
func (rw *taskRecorder) outcomes() <-chan taskOutcome {
	c := make(chan taskOutcome, 1)
	go func() {
		<-rw.done
		c <- rw.outcome()
	}()
	return c
}

// outcome reads the JSON-RPC response out of the recorded answer, a JSON
// body or an event stream; an answer without one (an HTTP refusal) is an
// internal error that says what came.
func (rw *taskRecorder) outcome() taskOutcome {
	body := rw.body.Bytes()
	var found taskOutcome
	try := func(b []byte) {
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(b, &resp) != nil {
			return
		}
		if resp.Result != nil || resp.Error != nil {
			found = taskOutcome{result: resp.Result, err: resp.Error}
		}
	}
	if strings.HasPrefix(rw.header.Get("Content-Type"), "text/event-stream") {
		for line := range bytes.Lines(body) {
			if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				try(bytes.TrimSpace(data))
			}
		}
	} else {
		try(body)
	}
	if found.result == nil && found.err == nil {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		found.err = mustJSON(map[string]any{"code": -32603,
			"message": fmt.Sprintf("the call was refused before it ran: HTTP %d: %s", cmpOr(rw.status, http.StatusOK), msg)})
	}
	return found
}

// writeRPCResult answers a request with result.
func writeTaskResult(w http.ResponseWriter, id json.RawMessage, result any) {
	writeTaskRPC(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// writeRPCError answers a request with a JSON-RPC error.
func writeTaskError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data any) {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	writeTaskRPC(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

func writeTaskRPC(w http.ResponseWriter, status int, msg any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(msg)
}

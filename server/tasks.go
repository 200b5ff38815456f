package server

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663), for
// clients of protocol 2026-07-28.
//
// A client that names the extension in a request's per-request
// capabilities (_meta io.modelcontextprotocol/clientCapabilities) accepts
// a task handle in place of the tools/call result. The extension lives
// beside go-sdk, at the JSON-RPC layer, as large arguments do: the
// transport hands go-sdk the call as it would any other, on a context of
// the task's own, and reads go-sdk's answer back (tasks_http.go). When the
// answer comes within the tool's inline window it goes to the client as
// it is; when it does not, or when it is an input-required result (a
// permission question, AskUserQuestion, a sub-agent's model turn), the
// client gets a CreateTaskResult and the call goes on. tasks/get reports
// the task, tasks/update answers its input requests (the task layer then
// retries the call with the answers and the requestState, as a multi
// round-trip client would: the parked call resumes, see roundtrip.go),
// and tasks/cancel cancels the call's context, which ends a command's
// process group as TaskStop does.
//
// A task belongs to the principal whose request made it: anyone else's
// tasks/get, tasks/update or tasks/cancel is answered as for an unknown
// task. It outlives the HTTP request that made it; its TTL (from its
// creation) bounds it: a task still running then is cancelled, and every
// task is forgotten then. Closing the server cancels every task.

// Names the extension defines.
const (
	tasksExtension  = "io.modelcontextprotocol/tasks"
	metaClientCaps  = "io.modelcontextprotocol/clientCapabilities"
	codeMissingCaps = -32021
	codeHeaderMism  = -32020
)

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// Defaults of TaskOptions.
const (
	// DefaultTaskTTL is how long a task lives from its creation.
	DefaultTaskTTL = time.Hour
	// DefaultTaskPollInterval is the poll interval tasks suggest.
	DefaultTaskPollInterval = time.Second
	// DefaultTaskInline is how long a call of a task tool (Bash, Agent,
	// WebFetch) is waited for before it becomes a task: a call that ends
	// sooner is answered as it always was.
	DefaultTaskInline = 3 * time.Second
)

// TaskPolicy says how calls of one tool become tasks.
type TaskPolicy struct {
	// Inline is how long a call runs before it becomes a task; 0 makes
	// every call a task at once.
	Inline time.Duration
	// Required refuses the tool to clients that do not accept tasks
	// (-32021, Missing Required Client Capability).
	Required bool
	// InputFirst asks for the input a call needs within its inline window
	// by multi round-trip (an input-required result; the client retries
	// the call with the answers), so that the task is made only once the
	// input is in. Without it such a call becomes a task in
	// input_required at once.
	InputFirst bool
}

// TaskOptions configure the Tasks extension.
type TaskOptions struct {
	// TTL is a task's life from its creation; 0 means DefaultTaskTTL.
	TTL time.Duration
	// PollInterval is the pollIntervalMs tasks suggest; 0 means
	// DefaultTaskPollInterval.
	PollInterval time.Duration
	// Tools are the tools whose calls become tasks once they have run
	// their inline window; nil means DefaultTaskTools. A call of any
	// other tool becomes a task only when it needs the client's input.
	Tools map[string]TaskPolicy
}

// DefaultTaskTools are the tools whose calls may outlast a host's patience.
func DefaultTaskTools() map[string]TaskPolicy {
	return map[string]TaskPolicy{
		"Bash":     {Inline: DefaultTaskInline},
		"Agent":    {Inline: DefaultTaskInline},
		"WebFetch": {Inline: DefaultTaskInline},
	}
}

func (o TaskOptions) ttl() time.Duration  { return cmpOr(o.TTL, DefaultTaskTTL) }
func (o TaskOptions) poll() time.Duration { return cmpOr(o.PollInterval, DefaultTaskPollInterval) }
func (o TaskOptions) policy(tool string) (TaskPolicy, bool) {
	if o.Tools == nil {
		p, ok := DefaultTaskTools()[tool]
		return p, ok
	}
	p, ok := o.Tools[tool]
	return p, ok
}

func cmpOr[T comparable](v, dflt T) T {
	var zero T
	if v == zero {
		return dflt
	}
	return v
}

// callOutcome of a call run for a task: its JSON-RPC result or error.
type taskOutcome struct {
	result json.RawMessage // the result object, or nil
	err    json.RawMessage // the error object, or nil
}

// inputRequired reports the input requests and request state of an
// input-required result.
func (o taskOutcome) inputRequired() (reqs map[string]json.RawMessage, state string, ok bool) {
	if o.result == nil {
		return nil, "", false
	}
	var r struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	if json.Unmarshal(o.result, &r) != nil || r.ResultType != "input_required" || len(r.InputRequests) == 0 {
		return nil, "", false
	}
	return r.InputRequests, r.RequestState, true
}

// mcpTask is one tools/call served as a task.
type mcpTask struct {
	id      string
	owner   string // the principal whose request made it
	created time.Time
	ttl     time.Duration
	poll    time.Duration
	cancel  context.CancelFunc
	// retry runs the call again with the answers to its input requests
	// and the request state, and returns where its outcome will come; set
	// before the task is shared, cleared under mu when it ends.
	retry func(answers map[string]json.RawMessage, state string) <-chan taskOutcome
	// ended is closed when the task reaches a terminal status.
	ended chan struct{}
	// dropState lets go of the call parked under a request state that
	// will not be retried (the task ended while waiting for input).
	dropState func(state string)

	mu       sync.Mutex
	status   string
	message  string
	updated  time.Time
	outcome  taskOutcome
	requests map[string]json.RawMessage // outstanding input requests
	answers  map[string]json.RawMessage // answers collected for them
	state    string                     // the requestState to retry with
	watchers map[int]func()             // called on every change (see watch)
	nextW    int
}

// taskStore keeps the tasks of a Server.
type taskStore struct {
	mu     sync.Mutex
	byID   map[string]*mcpTask
	closed bool
}

// newTask registers a task for owner's call; cancel ends the call.
func (s *Server) newTask(owner string, cancel context.CancelFunc) *mcpTask {
	opts := s.cfg.Tasks
	now := time.Now().UTC()
	t := &mcpTask{id: tools.RandomID(), owner: owner, created: now, updated: now,
		ttl: opts.ttl(), poll: opts.poll(), cancel: cancel, status: taskWorking, ended: make(chan struct{}),
		dropState: func(state string) {
			if v, ok := s.pending.LoadAndDelete(state); ok {
				v.(*pendingCall).cancel()
			}
		}}
	st := &s.tasks
	st.mu.Lock()
	if st.byID == nil {
		st.byID = map[string]*mcpTask{}
	}
	closed := st.closed
	if !closed {
		st.byID[t.id] = t
	}
	st.mu.Unlock()
	if closed {
		t.finish(taskCancelled, "the server is shutting down", taskOutcome{})
		return t
	}
	time.AfterFunc(t.ttl, func() { s.expireTask(t) })
	return t
}

// task finds owner's task by id.
func (s *Server) task(owner, id string) (*mcpTask, bool) {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	t, ok := s.tasks.byID[id]
	if !ok || t.owner != owner {
		return nil, false
	}
	return t, true
}

// expireTask ends a task whose TTL passed and forgets it.
func (s *Server) expireTask(t *mcpTask) {
	t.finish(taskFailed, "the task's TTL passed before it finished: it was cancelled", taskOutcome{
		err: mustJSON(map[string]any{"code": -32603, "message": "task expired: its TTL passed before it finished"}),
	})
	s.tasks.mu.Lock()
	delete(s.tasks.byID, t.id)
	s.tasks.mu.Unlock()
}

// closeTasks cancels every task and refuses new ones.
func (s *Server) closeTasks() {
	s.tasks.mu.Lock()
	s.tasks.closed = true
	all := slices.Collect(maps.Values(s.tasks.byID))
	s.tasks.mu.Unlock()
	for _, t := range all {
		t.finish(taskCancelled, "the server is shutting down", taskOutcome{})
	}
}

// follow waits for the call's outcome and records it; an input-required
// outcome moves the task to input_required.
func (t *mcpTask) follow(outcomes <-chan taskOutcome) {
	var out taskOutcome
	select {
	case out = <-outcomes:
	case <-t.ended:
		return
	}
	if reqs, state, ok := out.inputRequired(); ok {
		t.mu.Lock()
		if !t.terminal() {
			t.status, t.message, t.updated = taskInputRequired, "waiting for the client's answer (tasks/update)", time.Now().UTC()
			t.requests, t.answers, t.state = reqs, map[string]json.RawMessage{}, state
		}
		t.mu.Unlock()
		t.notify()
		return
	}
	if out.err != nil {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(out.err, &e)
		t.finish(taskFailed, e.Message, out)
		return
	}
	t.finish(taskCompleted, "", out)
}

// finish moves the task to a terminal status unless it is in one, and
// ends its call.
func (t *mcpTask) finish(status, message string, out taskOutcome) {
	t.mu.Lock()
	if t.terminal() {
		t.mu.Unlock()
		return
	}
	t.status, t.message, t.updated, t.outcome = status, message, time.Now().UTC(), out
	state := t.state
	t.requests, t.answers, t.state = nil, nil, ""
	t.retry = nil // lets the call's request body go
	t.mu.Unlock()
	if state != "" && t.dropState != nil {
		t.dropState(state)
	}
	close(t.ended)
	if t.cancel != nil {
		t.cancel()
	}
	t.notify()
}

// update takes the client's answers to outstanding input requests (others
// are ignored); once every outstanding request is answered the call is
// retried with them.
func (t *mcpTask) update(responses map[string]json.RawMessage) {
	t.mu.Lock()
	if t.status != taskInputRequired {
		t.mu.Unlock()
		return
	}
	for k, v := range responses {
		if _, ok := t.requests[k]; ok {
			t.answers[k] = v
			delete(t.requests, k)
		}
	}
	if len(t.requests) > 0 || len(t.answers) == 0 {
		t.updated = time.Now().UTC()
		t.mu.Unlock()
		return
	}
	answers, state, retry := t.answers, t.state, t.retry
	t.status, t.message, t.updated = taskWorking, "", time.Now().UTC()
	t.requests, t.answers, t.state = nil, nil, ""
	t.mu.Unlock()
	t.notify()
	go t.follow(retry(answers, state))
}

// setRetry sets how the task retries its call, unless it has ended.
func (t *mcpTask) setRetry(retry func(map[string]json.RawMessage, string) <-chan taskOutcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.terminal() {
		t.retry = retry
	}
}

// terminal reports whether the task has ended; t.mu is held.
func (t *mcpTask) terminal() bool {
	return t.status == taskCompleted || t.status == taskFailed || t.status == taskCancelled
}

// taskWire is a Task as the extension writes it: CreateTaskResult,
// tasks/get's DetailedTask and notifications/tasks' params.
type taskWire struct {
	ResultType     string                     `json:"resultType,omitempty"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          json.RawMessage            `json:"error,omitempty"`
}

// wire describes the task; detailed adds what its status carries
// (inputRequests, result, error), as tasks/get does.
func (t *mcpTask) wire(resultType string, detailed bool) taskWire {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := taskWire{ResultType: resultType, TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.Format(time.RFC3339Nano), LastUpdatedAt: t.updated.Format(time.RFC3339Nano),
		TTLMs: t.ttl.Milliseconds(), PollIntervalMs: t.poll.Milliseconds()}
	if !detailed {
		return w
	}
	switch t.status {
	case taskInputRequired:
		w.InputRequests = maps.Clone(t.requests)
	case taskCompleted:
		w.Result = t.outcome.result
	case taskFailed:
		w.Error = t.outcome.err
		if w.Error == nil {
			w.Error = mustJSON(map[string]any{"code": -32603, "message": t.message})
		}
	}
	return w
}

// watch calls f (which must not block) on every change of the task
// until the returned function is called.
func (t *mcpTask) watch(f func()) (unwatch func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watchers == nil {
		t.watchers = map[int]func(){}
	}
	t.nextW++
	n := t.nextW
	t.watchers[n] = f
	return func() {
		t.mu.Lock()
		delete(t.watchers, n)
		t.mu.Unlock()
	}
}

func (t *mcpTask) notify() {
	t.mu.Lock()
	ws := slices.Collect(maps.Values(t.watchers))
	t.mu.Unlock()
	for _, f := range ws {
		f()
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// taskInline reports how long the call req runs before it becomes an MCP
// task, when it may become one: the HTTP task layer notes it in the
// request's facts, the stdio one in _meta (metaTaskInline, which it keeps
// clients from sending).
func (s *Server) taskInline(req *mcp.CallToolRequest) (time.Duration, bool) {
	var ti *auth.TokenInfo
	if req.Extra != nil {
		ti = req.Extra.TokenInfo
	}
	if _, facts := factsOf(ti); facts != nil {
		if facts.taskInline != nil {
			return *facts.taskInline, true
		}
		return 0, false
	}
	if req.Session == nil || req.Params == nil || req.Params.Meta == nil {
		return 0, false
	}
	ms, ok := req.Params.Meta[metaTaskInline].(float64)
	if !ok {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

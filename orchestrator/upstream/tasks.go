package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Upstream tasks: the Tasks extension (io.modelcontextprotocol/tasks) of
// protocol 2026-07-28, as a client. A server that advertises it may answer
// a tools/call with a task handle instead of the result; the call then
// goes on in the server, chat polls tasks/get at the interval the server
// suggests, shows the task's status as the call's progress (the spinner
// line), answers the task's input requests (input_required: a permission
// question, a form) through the user's question UI and tasks/update, and
// ends it with tasks/cancel when the turn is interrupted. A call made a
// task detaches (tools.UseContext.Detach): the turn's later calls need not
// wait for it.

const (
	tasksExtension = "io.modelcontextprotocol/tasks"
	// taskVersion is the first protocol version with the extension.
	taskVersion = "2026-07-28"
	// maxRoundTrips bounds the input-required rounds of one call.
	maxRoundTrips = 10
	// minPoll and maxPoll bound the poll interval a server suggests.
	minPoll, maxPoll = 50 * time.Millisecond, 30 * time.Second
)

// taskState is a task as tools/call's CreateTaskResult and tasks/get
// describe it.
type taskState struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs int64                      `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	RequestState   string                     `json:"requestState"`
	Result         json.RawMessage            `json:"result"`
	Error          *jsonrpc.Error             `json:"error"`
}

// tasksCaller returns how chat sends requests of its own to the server
// when the session is on protocol 2026-07-28 or later and the server
// advertises the Tasks extension; nil otherwise (calls go through go-sdk
// as before).
func (s *server) tasksCaller(cs *mcp.ClientSession) (rawCaller, string) {
	ir := cs.InitializeResult()
	if ir == nil || ir.ProtocolVersion < taskVersion || ir.Capabilities == nil {
		return nil, ""
	}
	if _, ok := ir.Capabilities.Extensions[tasksExtension]; !ok {
		return nil, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.raw == nil || s.rawSession != cs {
		return nil, ""
	}
	return s.raw, ir.ProtocolVersion
}

// callAsTask runs tool on the server, accepting a task in place of the
// result; progress gets the task's status, uc's asker its questions.
func (s *server) callAsTask(ctx context.Context, raw rawCaller, version, tool string, args json.RawMessage, progressToken string, progress tools.Progress, uc *tools.UseContext) (*mcp.CallToolResult, error) {
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientInfo:         &mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion},
		mcp.MetaKeyClientCapabilities: callCapabilities(uc),
	}
	if progressToken != "" {
		meta["progressToken"] = progressToken
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := map[string]any{"name": tool, "arguments": args, "_meta": meta}
	for range maxRoundTrips {
		res, err := s.timed(ctx, func(ctx context.Context) (json.RawMessage, error) { return raw.call(ctx, "tools/call", params) })
		if err != nil {
			return nil, err
		}
		var st taskState
		if err := json.Unmarshal(res, &st); err != nil {
			return nil, fmt.Errorf("the server's answer is not a result: %w", err)
		}
		switch st.ResultType {
		case "task":
			return s.followTask(ctx, raw, version, tool, st, progress, uc)
		case "input_required":
			answers, err := answerInputs(ctx, uc, s.cfg.Name, st.InputRequests, nil)
			if err != nil {
				return nil, err
			}
			params["inputResponses"], params["requestState"] = answers, st.RequestState
			continue
		}
		var out mcp.CallToolResult
		if err := json.Unmarshal(res, &out); err != nil {
			return nil, fmt.Errorf("the server's result does not decode: %w", err)
		}
		return &out, nil
	}
	return nil, fmt.Errorf("%s asked for input more than %d times", tool, maxRoundTrips)
}

// taskCapabilities are the per-request client capabilities that accept a
// task.
func taskCapabilities() map[string]any {
	return map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}
}

// callCapabilities are the client capabilities of a call: tasks, and the
// input requests answerInputs answers (forms only where someone can be
// asked).
func callCapabilities(uc *tools.UseContext) map[string]any {
	caps := taskCapabilities()
	caps["roots"] = map[string]any{}
	if uc != nil && uc.Asker != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	return caps
}

// timed runs one request within the call timeout.
func (s *server) timed(ctx context.Context, f func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	rctx, cancel := context.WithTimeout(ctx, s.m.opts.CallTimeout)
	defer cancel()
	res, err := f(rctx)
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		return nil, fmt.Errorf("no answer within %s (the call timeout)", s.m.opts.CallTimeout)
	}
	return res, err
}

// followTask polls the task to its end. The call detaches first: the
// turn's other calls go on while the task runs.
func (s *server) followTask(ctx context.Context, raw rawCaller, version, tool string, st taskState, progress tools.Progress, uc *tools.UseContext) (*mcp.CallToolResult, error) {
	if st.TaskID == "" {
		return nil, errors.New("the server answered with a task that has no taskId")
	}
	if uc != nil && uc.Detach != nil {
		uc.Detach()
	}
	taskMeta := map[string]any{mcp.MetaKeyProtocolVersion: version, mcp.MetaKeyClientCapabilities: taskCapabilities()}
	answered := map[string]bool{}
	interval := time.Second
	for {
		if progress != nil {
			msg := st.Status
			if st.StatusMessage != "" {
				msg += " — " + st.StatusMessage
			}
			progress(tools.ProgressUpdate{Message: msg})
		}
		if st.PollIntervalMs > 0 {
			interval = min(max(time.Duration(st.PollIntervalMs)*time.Millisecond, minPoll), maxPoll)
		}
		switch st.Status {
		case "completed":
			var out mcp.CallToolResult
			if err := json.Unmarshal(st.Result, &out); err != nil {
				return nil, fmt.Errorf("the task's result does not decode: %w", err)
			}
			return &out, nil
		case "failed":
			if st.Error != nil {
				return nil, fmt.Errorf("the task failed: %w", st.Error)
			}
			return nil, fmt.Errorf("the task failed: %s", st.StatusMessage)
		case "cancelled":
			return nil, fmt.Errorf("the server cancelled the task: %s", st.StatusMessage)
		case "input_required":
			answers, err := answerInputs(ctx, uc, s.cfg.Name, st.InputRequests, answered)
			if err != nil {
				s.cancelTask(ctx, raw, st.TaskID, taskMeta)
				return nil, err
			}
			if len(answers) > 0 {
				params := map[string]any{"taskId": st.TaskID, "inputResponses": answers, "_meta": taskMeta}
				if _, err := s.timed(ctx, func(ctx context.Context) (json.RawMessage, error) { return raw.call(ctx, "tasks/update", params) }); err != nil {
					return nil, s.taskError(ctx, raw, st.TaskID, taskMeta, err)
				}
				for k := range answers {
					answered[k] = true
				}
				interval = 0 // look again at once
			}
		}
		select {
		case <-ctx.Done():
			s.cancelTask(ctx, raw, st.TaskID, taskMeta)
			return nil, ctx.Err()
		case <-time.After(interval):
		}
		res, err := s.timed(ctx, func(ctx context.Context) (json.RawMessage, error) {
			return raw.call(ctx, "tasks/get", map[string]any{"taskId": st.TaskID, "_meta": taskMeta})
		})
		if err != nil {
			return nil, s.taskError(ctx, raw, st.TaskID, taskMeta, err)
		}
		st = taskState{}
		if err := json.Unmarshal(res, &st); err != nil {
			return nil, fmt.Errorf("tasks/get's answer does not decode: %w", err)
		}
	}
}

// taskError is err from a request about a task; when the caller stopped
// waiting the task is cancelled.
func (s *server) taskError(ctx context.Context, raw rawCaller, id string, meta map[string]any, err error) error {
	if ctx.Err() != nil {
		s.cancelTask(ctx, raw, id, meta)
		return ctx.Err()
	}
	return err
}

// cancelTask tells the server to cancel the task (tasks/cancel), within
// the connect timeout whatever ctx says.
func (s *server) cancelTask(ctx context.Context, raw rawCaller, id string, meta map[string]any) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.m.opts.ConnectTimeout)
	defer cancel()
	if _, err := raw.call(cctx, "tasks/cancel", map[string]any{"taskId": id, "_meta": meta}); err != nil {
		s.logger().Warn(fmt.Sprintf("MCP server %q: cancelling task %s: %v", s.cfg.Name, id, err))
	}
}

// answerInputs answers the input requests not in skip: a form
// (elicitation/create) through the user's question UI, roots/list with the
// call's directory. A request chat cannot answer (sampling, a URL to
// open) is an error.
func answerInputs(ctx context.Context, uc *tools.UseContext, server string, reqs map[string]json.RawMessage, skip map[string]bool) (map[string]any, error) {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := map[string]any{}
	for _, k := range keys {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(reqs[k], &r); err != nil {
			return nil, fmt.Errorf("input request %q does not decode: %w", k, err)
		}
		switch r.Method {
		case "elicitation/create":
			ans, err := askForm(ctx, uc, server, k, r.Params)
			if err != nil {
				return nil, err
			}
			out[k] = ans
		case "roots/list":
			dir := ""
			if uc != nil && uc.Session != nil {
				dir = uc.Dir()
			}
			roots := []map[string]string{}
			if dir != "" {
				roots = append(roots, map[string]string{"uri": (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String(), "name": filepath.Base(dir)})
			}
			out[k] = map[string]any{"roots": roots}
		default:
			return nil, fmt.Errorf("the server asks for %s (input request %q), which chat cannot answer", r.Method, k)
		}
	}
	return out, nil
}

// askForm puts an elicitation form to the user, the server named as the
// one asking and its message made visible line by line (it is the
// server's text, not chat's); with nobody to ask the form is declined.
func askForm(ctx context.Context, uc *tools.UseContext, server, key string, params json.RawMessage) (map[string]any, error) {
	var p struct {
		Mode            string         `json:"mode"`
		Message         string         `json:"message"`
		RequestedSchema map[string]any `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("input request %q: %w", key, err)
	}
	if p.Mode != "" && p.Mode != "form" {
		return nil, fmt.Errorf("the server asks the user to act in %s mode (input request %q), which chat cannot show", p.Mode, key)
	}
	if uc == nil || uc.Asker == nil {
		return map[string]any{"action": "decline"}, nil
	}
	if p.RequestedSchema == nil {
		p.RequestedSchema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	lines := strings.Split(p.Message, "\n")
	for i, l := range lines {
		lines[i] = tools.Visible(l)
	}
	msg := fmt.Sprintf("MCP server %s asks:\n%s", tools.Visible(server), strings.Join(lines, "\n"))
	ans, err := uc.Asker.Ask(ctx, msg, p.RequestedSchema)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return map[string]any{"action": "decline"}, nil
	}
	if !slices.Contains([]string{"accept", "decline", "cancel"}, ans.Action) {
		ans.Action = "cancel"
	}
	out := map[string]any{"action": ans.Action}
	if ans.Action == "accept" {
		out["content"] = ans.Content
	}
	return out, nil
}

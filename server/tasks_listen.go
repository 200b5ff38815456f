package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Task status notifications (notifications/tasks) on a subscriptions/listen
// stream, for protocol 2026-07-28: over HTTP here, over stdio in
// tasks_stdio.go (the same stream, its messages lines on stdout among the
// connection's others, told apart by their subscription id).
//
// A subscriptions/listen request whose filter names taskIds is served
// here; any other goes to go-sdk as before. The stream acknowledges the
// task ids it agreed to (the caller's own tasks; others are left out as
// unknown), sends each task's state at once and again on every change, a
// complete DetailedTask as tasks/get would give it, and ends with the
// subscription's result once every task it follows has ended (or when the
// client leaves; closing the server ends every task). Only notifications/tasks travels
// on such a stream: the other notification types a client asks for on it
// are not agreed to (the acknowledgement says so), and stay for a stream
// without taskIds.

const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// listenParams are the params of subscriptions/listen the task layer reads.
type listenParams struct {
	Notifications struct {
		TaskIDs []string `json:"taskIds"`
	} `json:"notifications"`
	Meta map[string]json.RawMessage `json:"_meta"`
}

// serveTaskListen serves a subscriptions/listen that names taskIds and
// reports whether it did; when it did not, r's body is as it was.
func (h *HTTPServer) serveTaskListen(w http.ResponseWriter, r *http.Request, principal string) bool {
	body, err := readBody(r, h.opt.MaxBodyBytes)
	if err != nil {
		http.Error(w, "Bad Request: reading the request body: "+err.Error(), http.StatusBadRequest)
		return true
	}
	r.Body = preread(body)
	r.ContentLength = int64(len(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params listenParams    `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "subscriptions/listen" || msg.Params.Notifications.TaskIDs == nil {
		return false
	}
	if !acceptsTasks(msg.Params.Meta) {
		e := missingTasksCapability("a listen for task status notifications")
		writeTaskError(w, e.status, msg.ID, e.code, e.message, e.data)
		return true
	}
	agreed := []string{}
	var followed []*mcpTask
	for _, id := range msg.Params.Notifications.TaskIDs {
		if t, ok := h.server.task(principal, id); ok {
			agreed = append(agreed, id)
			followed = append(followed, t)
		}
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	subMeta := map[string]any{metaSubscriptionID: msg.ID}
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err == nil {
			_, err = fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return err == nil
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"notifications": map[string]any{"taskIds": agreed}, "_meta": subMeta}})

	streamTasks(followed, subMeta, r.Context().Done(), nil, func(v any) bool {
		if v == nil {
			// A heartbeat comment keeps intermediaries from closing an
			// idle stream.
			_, err := fmt.Fprint(w, ": still listening\n\n")
			if flusher != nil {
				flusher.Flush()
			}
			return err == nil
		}
		return send(v)
	}, func() {
		send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"resultType": "complete", "_meta": subMeta}})
	})
	return true
}

// streamTasks sends, through send, each followed task's state (what
// tasks/get would answer, as notifications/tasks with subMeta) at once and
// on every change, and calls end once every one has ended. It returns
// early when either of done and gone is closed (nil for none) or send
// fails; send(nil) is an idle beat, after a minute without news.
func streamTasks(followed []*mcpTask, subMeta map[string]any, done, gone <-chan struct{}, send func(any) bool, end func()) {
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	for _, t := range followed {
		defer t.watch(poke)()
	}
	sent := map[string]string{} // a task's last sent status and update time
	for {
		select {
		case <-done:
			return
		case <-gone:
			return
		default:
		}
		open := 0
		for _, t := range followed {
			tw := t.wire("", true)
			mark := tw.Status + " " + tw.LastUpdatedAt
			if sent[tw.TaskID] != mark {
				sent[tw.TaskID] = mark
				params := map[string]any{}
				b, _ := json.Marshal(tw)
				_ = json.Unmarshal(b, &params)
				params["_meta"] = subMeta
				if !send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks", "params": params}) {
					return
				}
			}
			if tw.Status == taskWorking || tw.Status == taskInputRequired {
				open++
			}
		}
		if open == 0 {
			end()
			return
		}
		select {
		case <-changed:
		case <-done:
			return
		case <-gone:
			return
		case <-time.After(time.Minute):
			if !send(nil) {
				return
			}
		}
	}
}

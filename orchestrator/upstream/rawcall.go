package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Requests of chat's own beside go-sdk's client session: go-sdk v1.8.0 has
// no task types (it decodes a task handle into an empty CallToolResult),
// so a tools/call that may become a task, and the tasks/ methods after
// it, are sent here and their results read raw. Over stdio they travel on
// the session's own connection (rawConn, which keeps their responses from
// go-sdk); over HTTP they are POSTs of their own to the server's endpoint
// (httpCaller).

// rawCaller sends JSON-RPC requests of chat's own to a server.
type rawCaller interface {
	// call sends method with params and returns its result, or the
	// server's error as a *jsonrpc.Error. When ctx ends first the server
	// is told (notifications/cancelled) and ctx's error returned.
	call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// rawTransport wraps a transport so that its connection carries requests
// of chat's own (rawConn).
type rawTransport struct {
	inner mcp.Transport
	conn  atomic.Pointer[rawConn]
}

// Connect implements mcp.Transport.
func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rc := &rawConn{Connection: c, waiting: map[jsonrpc.ID]chan *jsonrpc.Response{}, closed: make(chan struct{})}
	t.conn.Store(rc)
	return rc, nil
}

// rawConn is a connection that also carries requests of chat's own: their
// responses are taken out of what go-sdk reads.
type rawConn struct {
	mcp.Connection
	seq atomic.Int64

	mu        sync.Mutex
	waiting   map[jsonrpc.ID]chan *jsonrpc.Response
	closed    chan struct{}
	closeOnce sync.Once
}

// Read implements mcp.Connection: the responses to chat's own requests go
// to their callers, everything else to go-sdk.
func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.closeOnce.Do(func() { close(c.closed) })
			return nil, err
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			return msg, nil
		}
		c.mu.Lock()
		ch, ours := c.waiting[resp.ID]
		delete(c.waiting, resp.ID)
		c.mu.Unlock()
		if !ours {
			return msg, nil
		}
		ch <- resp
	}
}

// Close implements mcp.Connection.
func (c *rawConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

func (c *rawConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, err := jsonrpc.MakeID(fmt.Sprintf("agent-mcp-%d", c.seq.Add(1)))
	if err != nil {
		return nil, err
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: p}); err != nil {
		forget()
		return nil, err
	}
	select {
	case resp := <-ch:
		return resultOf(resp)
	case <-c.closed:
		forget()
		return nil, errors.New("the connection closed")
	case <-ctx.Done():
		forget()
		note, _ := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the caller stopped waiting"})
		_ = c.Connection.Write(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: note})
		return nil, ctx.Err()
	}
}

func resultOf(resp *jsonrpc.Response) (json.RawMessage, error) {
	if resp.Error != nil {
		var je *jsonrpc.Error
		if errors.As(resp.Error, &je) {
			return nil, je
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
	}
	return resp.Result, nil
}

// httpCaller sends requests of chat's own to a streamable HTTP server of
// protocol 2026-07-28, which keeps no session: each is a POST of its own,
// answered with JSON or an event stream whose notifications/progress go
// to onProgress.
type httpCaller struct {
	url        string
	client     *http.Client
	version    string
	onProgress func(*mcp.ProgressNotificationParams)
	seq        atomic.Int64
}

func (h *httpCaller) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, err := jsonrpc.MakeID(fmt.Sprintf("agent-mcp-%d", h.seq.Add(1)))
	if err != nil {
		return nil, err
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	res, err := h.post(ctx, &jsonrpc.Request{ID: id, Method: method, Params: p}, nameOf(method, p))
	if err != nil && ctx.Err() != nil {
		note, _ := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the caller stopped waiting"})
		_, _ = h.post(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: note}, "")
		return nil, ctx.Err()
	}
	return res, err
}

// nameOf is what the Mcp-Name header carries for a request.
func nameOf(method string, params json.RawMessage) string {
	var p struct {
		Name   string `json:"name"`
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(params, &p)
	switch {
	case method == "tools/call":
		return p.Name
	case strings.HasPrefix(method, "tasks/"):
		return p.TaskID
	}
	return ""
}

// post sends one message and, for a request, reads its response.
func (h *httpCaller) post(ctx context.Context, msg *jsonrpc.Request, name string) (json.RawMessage, error) {
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", h.version)
	req.Header.Set("Mcp-Method", msg.Method)
	if name != "" && isASCIIPrintable(name) {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if !msg.IsCall() {
		return nil, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		return h.readStream(resp.Body, msg.ID)
	case ct == "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return nil, err
		}
		return h.take(b, msg.ID)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return nil, fmt.Errorf("%s: HTTP %s: %s", msg.Method, resp.Status, strings.TrimSpace(string(b)))
}

// take reads the response to id from one JSON-RPC message; a notification
// is handled and (nil, nil) returned.
func (h *httpCaller) take(data []byte, id jsonrpc.ID) (json.RawMessage, error) {
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, fmt.Errorf("the server's answer is not JSON-RPC: %w", err)
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		if m.ID != id {
			return nil, fmt.Errorf("the server answered request %v instead of %v", m.ID.Raw(), id.Raw())
		}
		res, err := resultOf(m)
		if err == nil && res == nil {
			res = json.RawMessage("null")
		}
		return res, err
	case *jsonrpc.Request:
		if m.Method == "notifications/progress" && h.onProgress != nil {
			var p mcp.ProgressNotificationParams
			if json.Unmarshal(m.Params, &p) == nil {
				h.onProgress(&p)
			}
		}
	}
	return nil, nil
}

// readStream reads an event stream until the response to id.
func (h *httpCaller) readStream(r io.Reader, id jsonrpc.ID) (json.RawMessage, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	var data []byte
	for {
		more := sc.Scan()
		line := sc.Text()
		if !more || line == "" {
			if len(data) > 0 {
				res, err := h.take(data, id)
				if res != nil || err != nil {
					return res, err
				}
				data = data[:0]
			}
			if !more {
				if err := sc.Err(); err != nil {
					return nil, err
				}
				return nil, errors.New("the server's event stream ended without the response")
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(v, " ")...)
		}
	}
}

func isASCIIPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return false
		}
	}
	return true
}

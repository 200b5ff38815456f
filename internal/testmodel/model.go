package testmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Part is one piece of a scripted reply.
type Part struct {
	// Text is streamed as assistant text (in a few deltas).
	Text string
	// Tool is streamed as a tool call.
	Tool *ToolCall
	// Wait, when set, is called before the next part is sent; the stream
	// stays open until it returns. It gets a context that ends after the
	// server's wait limit, so a client that never satisfies it cannot
	// hang the test; the timeout is recorded as a script error.
	Wait func(ctx context.Context) error
	// Thinking is streamed as extended thinking (Anthropic, signed
	// "sig-test") or as reasoning (OpenAI: a reasoning_content delta, or
	// ReasoningField's).
	Thinking string
	// ReasoningField names the OpenAI delta field that carries Thinking;
	// "" is reasoning_content (DeepSeek, vLLM), "reasoning" OpenRouter's.
	ReasoningField string
	// Usage, when positive, streams a usage report of this many output
	// tokens so far (with the reply's InputTokens): a message_delta
	// (Anthropic), a usage chunk (OpenAI, as vLLM's continuous usage
	// stats send).
	Usage int
	// Error, when set, ends the stream with an error event of this type
	// ("overloaded_error", "server_error", ...) after the parts before it.
	Error string
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	ID, Name string
	// Input is the call's arguments as JSON.
	Input string
}

// Reply is the scripted answer to one model request.
type Reply struct {
	Parts []Part
	// Stop overrides the stop reason ("end_turn", "tool_use",
	// "max_tokens"); by default tool_use when a tool is called.
	Stop string
	// InputTokens and OutputTokens are reported as usage.
	InputTokens, OutputTokens int
	// Status, when set, answers with this HTTP status and Body instead,
	// with Header's fields (e.g. Retry-After).
	Status int
	Body   string
	Header map[string]string
	// Model, when set, is the model name the request must carry; another
	// is recorded as a script error.
	Model string
}

// Overloaded is Anthropic's 529 reply.
func Overloaded() Reply {
	return Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
}

// TooLong is the 400 a request beyond the model's context window gets, in
// Anthropic's words (OpenAI-compatible clients recognise it too).
func TooLong() Reply {
	return Reply{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`}
}

// Say is a reply of text only.
func Say(text string) Reply { return Reply{Parts: []Part{{Text: text}}} }

// Call is a reply that calls tools (after optional text).
func Call(calls ...ToolCall) Reply {
	r := Reply{}
	for i := range calls {
		r.Parts = append(r.Parts, Part{Tool: &calls[i]})
	}
	return r
}

// Request is one request the server received.
type Request struct {
	// Format is "anthropic" or "openai".
	Format string
	Path   string
	Header http.Header
	// Body is the decoded JSON body.
	Body map[string]any
	Raw  []byte
}

// Server is the scripted model server.
type Server struct {
	URL string
	// WaitLimit bounds each Part.Wait; default 10s.
	WaitLimit time.Duration

	srv      *httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
	errs     []string
}

// TB is the part of testing.TB the server uses.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
}

// NewServer starts a scripted model server on 127.0.0.1 replaying replies.
func NewServer(t TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{replies: replies, WaitLimit: 10 * time.Second}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Errorf("testmodel: listen: %v", err)
		return s
	}
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
		for _, e := range s.Errors() {
			t.Errorf("testmodel: %s", e)
		}
	})
	return s
}

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Errors lists script failures: requests beyond the script, waits that
// timed out.
func (s *Server) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

func (s *Server) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	format := ""
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages"):
		format = "anthropic"
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		format = "openai"
	default:
		http.Error(w, "testmodel: unknown path "+r.URL.Path, http.StatusNotFound)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Format: format, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
	n := len(s.requests)
	var reply Reply
	ok := len(s.replies) > 0
	if ok {
		reply, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if !ok {
		s.fail("request %d (%s) has no scripted reply", n, format)
		http.Error(w, `{"error":{"type":"api_error","message":"testmodel: script exhausted"}}`, http.StatusInternalServerError)
		return
	}
	if reply.Model != "" && body["model"] != reply.Model {
		s.fail("request %d: model %v, want %s", n, body["model"], reply.Model)
	}
	if reply.Status != 0 {
		for k, v := range reply.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sw := &sse{w: w, ctx: r.Context()}
	if format == "anthropic" {
		s.streamAnthropic(sw, reply)
	} else {
		s.streamOpenAI(sw, reply)
	}
}

type sse struct {
	w   http.ResponseWriter
	ctx context.Context
}

func (e *sse) send(event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// wait runs a part's Wait under the server's limit.
func (s *Server) wait(ctx context.Context, p Part) {
	if p.Wait == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.WaitLimit)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		s.fail("scripted wait failed: %v", err)
	}
}

// chunks splits s into up to three deltas, to exercise accumulation.
func chunks(s string) []string {
	if len(s) < 6 {
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}

func stopOf(r Reply) string {
	if r.Stop != "" {
		return r.Stop
	}
	for _, p := range r.Parts {
		if p.Tool != nil {
			return "tool_use"
		}
	}
	return "end_turn"
}

func (s *Server) streamAnthropic(e *sse, r Reply) {
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": "test-model", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": r.InputTokens, "output_tokens": 1},
	}})
	e.send("ping", map[string]any{"type": "ping"})
	idx := 0
	for _, p := range r.Parts {
		if p.Error != "" {
			e.send("error", map[string]any{"type": "error", "error": map[string]any{"type": p.Error, "message": "Overloaded"}})
			return
		}
		switch {
		case p.Usage > 0:
			e.send("message_delta", map[string]any{"type": "message_delta",
				"delta": map[string]any{"stop_reason": nil, "stop_sequence": nil},
				"usage": map[string]any{"output_tokens": p.Usage}})
		case p.Thinking != "":
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
				"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, c := range chunks(p.Thinking) {
				e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
					"delta": map[string]any{"type": "thinking_delta", "thinking": c}})
			}
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "signature_delta", "signature": "sig-test"}})
			e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
			idx++
		case p.Tool != nil:
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
				"content_block": map[string]any{"type": "tool_use", "id": p.Tool.ID, "name": p.Tool.Name, "input": map[string]any{}}})
			for _, c := range chunks(p.Tool.Input) {
				e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
			}
			e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
			idx++
		case p.Text != "":
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, c := range chunks(p.Text) {
				e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
					"delta": map[string]any{"type": "text_delta", "text": c}})
			}
			e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
			idx++
		}
		s.wait(e.ctx, p)
	}
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopOf(r), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.OutputTokens}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

func (s *Server) streamOpenAI(e *sse, r Reply) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	e.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	tc := 0
	// A streamed OpenAI tool call is known to be complete only when
	// something follows it, so each part's wait runs after the next part
	// (or the finish chunk) has been sent.
	var pending Part
	for _, p := range r.Parts {
		if p.Error != "" {
			s.wait(e.ctx, pending)
			e.send("", map[string]any{"error": map[string]any{"type": p.Error, "message": "The server is overloaded", "code": nil}})
			return
		}
		switch {
		case p.Usage > 0:
			e.send("", map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
				"choices": []any{}, "usage": map[string]any{"prompt_tokens": r.InputTokens, "completion_tokens": p.Usage,
					"total_tokens": r.InputTokens + p.Usage}})
		case p.Thinking != "":
			field := p.ReasoningField
			if field == "" {
				field = "reasoning_content"
			}
			for _, c := range chunks(p.Thinking) {
				e.send("", chunk(map[string]any{field: c}, nil))
			}
		case p.Tool != nil:
			e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": tc, "id": p.Tool.ID, "type": "function",
				"function": map[string]any{"name": p.Tool.Name, "arguments": ""}}}}, nil))
			for _, c := range chunks(p.Tool.Input) {
				e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": tc,
					"function": map[string]any{"arguments": c}}}}, nil))
			}
			tc++
		case p.Text != "":
			for _, c := range chunks(p.Text) {
				e.send("", chunk(map[string]any{"content": c}, nil))
			}
		}
		s.wait(e.ctx, pending)
		pending = p
	}
	finish := map[string]string{"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}[stopOf(r)]
	e.send("", chunk(map[string]any{}, finish))
	s.wait(e.ctx, pending)
	e.send("", map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": r.InputTokens, "completion_tokens": r.OutputTokens,
			"total_tokens": r.InputTokens + r.OutputTokens}})
	fmt.Fprint(e.w, "data: [DONE]\n\n")
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

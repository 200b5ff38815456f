package hosts

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The fake model APIs. Each plays a model that follows a script: it
// answers the host's main-loop request with the script's next tool call,
// chosen by how many calls the conversation already holds, and ends the
// turn with text when the script is done. Every request is parsed and the
// tool results in it, exactly as the host sent them back to the model, are
// kept for the test to check. They speak the wire format of the real APIs
// closely enough for the real hosts: Anthropic Messages and OpenAI
// Responses as server-sent events, Gemini's streamGenerateContent as SSE
// with alt=sse.

// call is a tool call the scripted model makes.
type call struct {
	// Name is the tool's name as the host offers it to the model; for
	// Codex, Namespace holds the server's namespace and Name the bare name.
	Name, Namespace string
	Input           map[string]any
}

// step makes the next call from the results so far (which a call such as
// reading a resource named in an earlier result needs).
type step func(results []result) call

// fixed is a step that always makes c.
func fixed(c call) step { return func([]result) call { return c } }

// result is one tool result as the host sent it to the model.
type result struct {
	// ID is the call's id; Tool the name the model called.
	ID, Tool string
	// Text is the result's text blocks joined with newlines.
	Text string
	// IsError is the host's error mark, when ErrorShown says its API has
	// one (the Responses API has none: Codex shows only the text).
	IsError, ErrorShown bool
	// Raw is the result as it appeared in the request.
	Raw json.RawMessage
}

// fakeModel is a scripted model behind an HTTP API.
type fakeModel struct {
	srv    *httptest.Server
	script []step
	// Only main-loop requests (those offering agent-mcp's tools) follow
	// the script; others (titles, routing) get a plain answer.
	mu      sync.Mutex
	results []result // of the latest main-loop request
	// offered are the tools of the first main-loop request (Anthropic).
	offered []offeredTool
}

// offeredTool is one tool of a model request as the host offered it: a
// deferred tool is there by name only until the model searches for it.
type offeredTool struct {
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading"`
}

// offer keeps the tools of the first main-loop request.
func (f *fakeModel) offer(ts []offeredTool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.offered == nil {
		f.offered = ts
	}
}

// Offered are the tools of the first main-loop request.
func (f *fakeModel) Offered() []offeredTool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.offered
}

func (f *fakeModel) URL() string { return f.srv.URL }

// record keeps the results of a main-loop request.
func (f *fakeModel) record(rs []result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(rs) >= len(f.results) {
		f.results = rs
	}
}

// Results are the tool results of the latest main-loop request.
func (f *fakeModel) Results() []result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]result(nil), f.results...)
}

// next is the call for a conversation that already holds made calls, or
// nil when the script is done.
func (f *fakeModel) next(made int, rs []result) *call {
	if made >= len(f.script) {
		return nil
	}
	c := f.script[made](rs)
	return &c
}

func newFake(t *testing.T, h func(f *fakeModel, w http.ResponseWriter, r *http.Request, body []byte)) *fakeModel {
	f := &fakeModel{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h(f, w, r, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// sse writes server-sent events; named events carry an event: line.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ---- Anthropic Messages API (Claude Code) ----

type anthropicRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []offeredTool `json:"tools"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Text      string          `json:"text"`
}

// newAnthropic is a fake Anthropic Messages API: POST /v1/messages
// streams the reply as Claude's API does (message_start, content blocks
// with deltas, message_delta with the stop reason, message_stop).
func newAnthropic(t *testing.T, script ...step) *fakeModel {
	f := newFake(t, func(f *fakeModel, w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/count_tokens"):
			writeJSON(w, map[string]int{"input_tokens": 100})
			return
		case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages"):
			http.NotFound(w, r)
			return
		}
		var req anthropicRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		main := false
		for _, tl := range req.Tools {
			if strings.HasPrefix(tl.Name, "mcp__agent-mcp__") || tl.Name == "ToolSearch" {
				main = true
			}
		}
		made, names := 0, map[string]string{}
		var rs []result
		for _, m := range req.Messages {
			var blocks []anthropicBlock
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue // a plain string
			}
			raws := []json.RawMessage{}
			_ = json.Unmarshal(m.Content, &raws)
			for i, b := range blocks {
				switch b.Type {
				case "tool_use":
					made++
					names[b.ID] = b.Name
				case "tool_result":
					res := result{ID: b.ToolUseID, Tool: names[b.ToolUseID], IsError: b.IsError, ErrorShown: true, Raw: raws[i]}
					var s string
					if json.Unmarshal(b.Content, &s) == nil {
						res.Text = s
					} else {
						var parts []anthropicBlock
						_ = json.Unmarshal(b.Content, &parts)
						var texts []string
						for _, p := range parts {
							if p.Type == "text" {
								texts = append(texts, p.Text)
							}
						}
						res.Text = strings.Join(texts, "\n")
					}
					rs = append(rs, res)
				}
			}
		}
		var c *call
		if main {
			f.offer(req.Tools)
			f.record(rs)
			c = f.next(made, rs)
		}
		s := startSSE(w)
		s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": fmt.Sprintf("msg_%d", made), "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": 100, "output_tokens": 1},
		}})
		stop := "end_turn"
		if c != nil {
			stop = "tool_use"
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", made), "name": c.Name, "input": map[string]any{}}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": mustJSON(c.Input)}})
		} else {
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "text", "text": ""}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": "Done."}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		s.event("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
		s.event("message_stop", map[string]any{"type": "message_stop"})
	})
	f.script = script
	return f
}

// ---- OpenAI Responses API (Codex CLI) ----

type responsesItem struct {
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
}

// newResponses is a fake OpenAI Responses API: POST /v1/responses streams
// response.created, the output item (a function call or a message) and
// response.completed.
func newResponses(t *testing.T, script ...step) *fakeModel {
	f := newFake(t, func(f *fakeModel, w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
			writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []json.RawMessage `json:"input"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		main := false
		for _, tl := range req.Tools {
			if strings.HasPrefix(tl.Name, "mcp__agent_mcp") {
				main = true
			}
		}
		made, names := 0, map[string]string{}
		var rs []result
		for _, raw := range req.Input {
			var it responsesItem
			if json.Unmarshal(raw, &it) != nil {
				continue
			}
			switch it.Type {
			case "function_call":
				made++
				names[it.CallID] = it.Name
			case "function_call_output":
				res := result{ID: it.CallID, Tool: names[it.CallID], Raw: raw}
				var s string
				if json.Unmarshal(it.Output, &s) == nil {
					res.Text = s
				} else {
					var parts []struct{ Type, Text string }
					_ = json.Unmarshal(it.Output, &parts)
					var texts []string
					for _, p := range parts {
						if p.Type == "input_text" || p.Type == "output_text" {
							texts = append(texts, p.Text)
						}
					}
					res.Text = strings.Join(texts, "\n")
				}
				rs = append(rs, res)
			}
		}
		var c *call
		if main {
			f.record(rs)
			c = f.next(made, rs)
		}
		id := fmt.Sprintf("resp_%d", made)
		var item map[string]any
		if c != nil {
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", made), "call_id": fmt.Sprintf("call_%d", made),
				"name": c.Name, "arguments": mustJSON(c.Input), "status": "completed"}
			if c.Namespace != "" {
				item["namespace"] = c.Namespace
			}
		} else {
			item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", made), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": "Done.", "annotations": []any{}}}}
		}
		s := startSSE(w)
		s.event("response.created", map[string]any{"type": "response.created",
			"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "output": []any{}}})
		s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
		s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
		s.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": id, "object": "response", "status": "completed", "output": []any{item},
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
				"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}},
		}})
	})
	f.script = script
	return f
}

// ---- Gemini API (Gemini CLI) ----

// newGemini is a fake Gemini API: models/*:streamGenerateContent?alt=sse
// streams one candidate; models/*:generateContent (Gemini CLI's routing
// and checks, which ask for JSON) gets a JSON answer; countTokens a count.
func newGemini(t *testing.T, script ...step) *fakeModel {
	f := newFake(t, func(f *fakeModel, w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.HasSuffix(r.URL.Path, ":countTokens") {
			writeJSON(w, map[string]int{"totalTokens": 100})
			return
		}
		stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
		if r.Method != http.MethodPost || !stream && !strings.HasSuffix(r.URL.Path, ":generateContent") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					FunctionCall *struct {
						ID   string `json:"id"`
						Name string `json:"name"`
					} `json:"functionCall"`
					FunctionResponse *struct {
						ID       string          `json:"id"`
						Name     string          `json:"name"`
						Response json.RawMessage `json:"response"`
					} `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
			Tools []struct {
				FunctionDeclarations []struct {
					Name string `json:"name"`
				} `json:"functionDeclarations"`
			} `json:"tools"`
			GenerationConfig struct {
				ResponseMimeType string `json:"responseMimeType"`
			} `json:"generationConfig"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		main := false
		for _, tl := range req.Tools {
			for _, d := range tl.FunctionDeclarations {
				if strings.HasPrefix(d.Name, "mcp_agent-mcp_") {
					main = true
				}
			}
		}
		made := 0
		var rs []result
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionCall != nil {
					made++
				}
				if fr := p.FunctionResponse; fr != nil {
					var resp struct {
						Output string `json:"output"`
						Error  string `json:"error"`
					}
					_ = json.Unmarshal(fr.Response, &resp)
					res := result{ID: fr.ID, Tool: fr.Name, Text: resp.Output, ErrorShown: true, Raw: fr.Response}
					if resp.Error != "" {
						res.Text, res.IsError = resp.Error, true
					}
					rs = append(rs, res)
				}
			}
		}
		var parts []any
		switch {
		case main:
			f.record(rs)
			if c := f.next(made, rs); c != nil {
				parts = []any{map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Input}}}
			} else {
				parts = []any{map[string]any{"text": "Done."}}
			}
		case req.GenerationConfig.ResponseMimeType == "application/json":
			// Routing and next-speaker checks: a plausible JSON answer.
			parts = []any{map[string]any{"text": mustJSON(map[string]any{
				"reasoning": "scripted", "next_speaker": "user", "model_choice": "flash",
				"complexity_reasoning": "scripted", "complexity_score": 1,
			})}}
		default:
			parts = []any{map[string]any{"text": "Done."}}
		}
		resp := map[string]any{
			"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
			"modelVersion":  "gemini-fake",
		}
		if !stream {
			writeJSON(w, resp)
			return
		}
		startSSE(w).event("", resp)
	})
	f.script = script
	return f
}

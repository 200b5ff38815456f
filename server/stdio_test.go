package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// TestServeIO_bad_lines_are_answered_and_the_session_goes_on sends every
// kind of bad line, then a ping, and closes stdin at once: each bad line
// gets its JSON-RPC error, and the requests sent before the end are still
// answered.
func TestServeIO_bad_lines_are_answered_and_the_session_goes_on(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	cases := []struct {
		name, line string
		code       float64
		id         any
		text       string
	}{
		{"not_json", `{this is not json`, -32700, nil, "not valid JSON"},
		{"not_an_object", `42`, -32600, nil, "must be a JSON object"},
		{"wrong_version", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, -32600, 5.0, `"jsonrpc" must be "2.0"`},
		{"method_not_a_string", `{"jsonrpc":"2.0","id":6,"method":7}`, -32600, 6.0, `"method" must be a string`},
		{"id_not_a_string_or_number", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, nil, `"id" must be a string or a number`},
		{"neither_request_nor_response", `{"jsonrpc":"2.0","id":"x"}`, -32600, "x", `needs a "method"`},
	}
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for _, c := range cases {
		in.WriteString(c.line + "\n")
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.serveIO(context.Background(), strings.NewReader(in.String()), pw); pw.Close() }()
	var msgs []map[string]any
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("the server wrote a line that is not JSON: %q", sc.Text())
		}
		msgs = append(msgs, m)
	}
	if err := <-done; err != nil {
		t.Fatalf("serveIO: %v", err)
	}
	find := func(pred func(map[string]any) bool) map[string]any {
		for _, m := range msgs {
			if pred(m) {
				return m
			}
		}
		return nil
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := find(func(m map[string]any) bool {
				e, _ := m["error"].(map[string]any)
				msg, _ := e["message"].(string)
				return e != nil && strings.Contains(msg, c.text)
			})
			if m == nil {
				t.Fatalf("no error mentioning %q among %v", c.text, msgs)
			}
			if e := m["error"].(map[string]any); e["code"] != c.code || m["id"] != c.id {
				t.Fatalf("error %v with id %v, want code %v id %v", e, m["id"], c.code, c.id)
			}
		})
	}
	for _, id := range []any{0.0, "last"} {
		if find(func(m map[string]any) bool { return m["id"] == id && m["result"] != nil }) == nil {
			t.Fatalf("request %v was not answered; got %v", id, msgs)
		}
	}
}

func TestReadLine_skips_an_overlong_line(t *testing.T) {
	t.Parallel()
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"\nok\n"), 16)
	line, skipped, err := readLine(r, 50)
	if skipped == nil || line != nil || err != nil {
		t.Fatalf("first line: %q skipped=%v err=%v, want skipped as too long", line, skipped, err)
	}
	line, skipped, err = readLine(r, 50)
	if string(line) != "ok" || skipped != nil || err != nil {
		t.Fatalf("second line: %q skipped=%v err=%v, want \"ok\"", line, skipped, err)
	}
}

// TestReadLine_answers_an_overlong_request_by_its_id skips messages over
// the limit and finds the request's id where clients put it, first or
// last, so the error answers the call; an id found only inside the
// message's members is not taken for the request's.
func TestReadLine_answers_an_overlong_request_by_its_id(t *testing.T) {
	big := `{"file_path":"/tmp/x","content":"` + strings.Repeat(`line\n`, 40_000) + `"}`
	for _, c := range []struct {
		name, line string
		id         string // the JSON of the id found; "" for none
	}{
		{"id_first", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Write","arguments":` + big + `}}`, `7`},
		{"id_last", `{"method":"tools/call","params":{"name":"Write","arguments":` + big + `},"jsonrpc":"2.0","id":"call \"8\""}`, `"call \"8\""`},
		{"id_after_a_small_object", `{"jsonrpc":"2.0","_meta":{"id":1,"k":[1,2]},"id":9,"params":{"arguments":` + big + `}}`, `9`},
		{"nested_id_only", `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":` + big + `,"id":5}}`, ``},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/x","params":` + big + `}`, ``},
		{"id_not_a_string_or_number", `{"jsonrpc":"2.0","id":{"a":1},"params":` + big + `}`, ``},
		{"not_json", `x` + big, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(c.line+"\n"), 64<<10)
			line, skipped, err := readLine(r, 100_000)
			if skipped == nil || line != nil || err != nil {
				t.Fatalf("readLine: %d bytes, skipped=%v, err=%v; want the line skipped", len(line), skipped != nil, err)
			}
			if got := string(skipped.id()); got != c.id {
				t.Errorf("id %q, want %q", got, c.id)
			}
		})
	}
}

// rawLine is the next line the server writes.
func (w *stdioWriter) rawLine(t *testing.T) []byte {
	t.Helper()
	l, err := w.out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestServeIO_batches: protocol versions before 2025-06-18 may send a
// batch, answered by one array of the responses in the requests' order;
// from 2025-06-18 on a batch is refused with -32600 and the session goes
// on (the SDK's reader ended the session).
func TestServeIO_batches(t *testing.T) {
	t.Parallel()
	const batch = `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n"
	t.Run("2025-03-26", func(t *testing.T) {
		t.Parallel()
		w := newStdioSession(t, 0, "2025-03-26")
		w.send(t, []byte(batch))
		var got []map[string]any
		if line := w.rawLine(t); json.Unmarshal(line, &got) != nil || len(got) != 2 || got[0]["id"] != "a" || got[1]["id"] != 2.0 || got[0]["result"] == nil {
			t.Fatalf("a batch of two pings and a notification was answered %s, want an array of the two results, in order", line)
		}
	})
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			w := newStdioSession(t, 0, version)
			res := w.roundTrip(t, []byte(batch))
			e, _ := res["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e["code"] != -32600.0 || !strings.Contains(msg, "batches are not part of MCP from protocol version 2025-06-18") {
				t.Fatalf("a batch was answered %v, want -32600 saying batches are not part of this protocol version", res)
			}
			if res := w.roundTrip(t, []byte(`{"jsonrpc":"2.0","id":"next","method":"ping"}`+"\n")); res["id"] != "next" || res["result"] == nil {
				t.Fatalf("the session did not go on: %v", res)
			}
		})
	}
}

// TestServeIO_bad_responses: a response the client sends without an id
// or with an error that is not an error object is refused, and the
// session goes on (the SDK's reader ended the session).
func TestServeIO_bad_responses(t *testing.T) {
	t.Parallel()
	w := newStdioWriter(t, 0)
	for _, c := range []struct{ line, text string }{
		{`{"jsonrpc":"2.0","result":{}}`, `a response needs the "id"`},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, `a response needs the "id"`},
		{`{"jsonrpc":"2.0","id":3,"error":5}`, `"error" must be an object`},
	} {
		res := w.roundTrip(t, []byte(c.line+"\n"))
		e, _ := res["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if e["code"] != -32600.0 || !strings.Contains(msg, c.text) {
			t.Errorf("%s was answered %v, want -32600 saying %q", c.line, res, c.text)
		}
	}
	if res := w.roundTrip(t, []byte(`{"jsonrpc":"2.0","id":"next","method":"ping"}`+"\n")); res["id"] != "next" || res["result"] == nil {
		t.Fatalf("the session did not go on: %v", res)
	}
}

// TestServeIO_large_arguments_are_held_aside: a tools/call whose arguments
// are large has them held by the transport, the SDK decoding only the
// envelope; the call gets them back whatever else its params carry, and a
// client naming held arguments itself gets an error, not another call's.
func TestServeIO_large_arguments_are_held_aside(t *testing.T) {
	t.Parallel()
	w := newStdioWriter(t, 0)
	content := strings.Repeat("held \"aside\" line\n", 10_000) // 180KB, over heldArgumentsOver
	call := func(name string, meta string) map[string]any {
		w.next++
		args, _ := json.Marshal(map[string]any{"file_path": filepath.Join(w.dir, name), "content": content})
		params := `{"name":"Write","arguments":` + string(args) + `}`
		if meta != "" {
			params = `{` + meta + `, "name":"Write","arguments":` + string(args) + " }"
		}
		return w.roundTrip(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", w.next, params)))
	}
	for _, c := range []struct{ name, meta string }{
		{"no_meta", ""},
		{"empty_meta", `"_meta" : { }`},
		{"meta_with_members", `"_meta":{"progressToken":"p1","x":[1,{"y":"}"}]}`},
	} {
		text, isErr := callText(t, call(c.name+".txt", c.meta))
		if isErr {
			t.Fatalf("%s: the Write failed: %s", c.name, text)
		}
		if got, err := os.ReadFile(filepath.Join(w.dir, c.name+".txt")); err != nil || string(got) != content {
			t.Fatalf("%s: the file holds %d bytes (%v), want the %d written", c.name, len(got), err, len(content))
		}
	}
	res := call("forged.txt", fmt.Sprintf(`"_meta":{%q:"0123456789abcdef0123456789abcdef"}`, largeargs.MetaKey))
	if text, isErr := callText(t, res); isErr || !strings.Contains(text, "Created") {
		// Held again by the transport: the client's key is overwritten by the
		// transport's own (the last of a repeated name wins).
		t.Fatalf("a call naming held arguments itself: %v", res)
	}
	if n := w.srv.held.Len(); n != 0 {
		t.Errorf("%d arguments still held after their call", n)
	}
	small := w.roundTrip(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"forged","method":"tools/call","params":{"_meta":{%q:"0123456789abcdef0123456789abcdef"},"name":"Write","arguments":{}}}`+"\n", largeargs.MetaKey)))
	if e, _ := small["error"].(map[string]any); e == nil || e["code"] != -32602.0 || !strings.Contains(e["message"].(string), largeargs.MetaKey) {
		t.Fatalf("a small call naming held arguments was answered %v, want -32602 naming %s", small, largeargs.MetaKey)
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	obj := []byte(` { "a" : 1 , "b\u0022":"x,}" ,"c":{"d":[1,"]",{}]},"e":null,"a":-2.5e3 }`)
	got := map[string]string{}
	for k, v := range members(obj) {
		got[k] = string(v)
	}
	want := map[string]string{"a": "-2.5e3", `b"`: `"x,}"`, "c": `{"d":[1,"]",{}]}`, "e": "null"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("members: %v, want %v", got, want)
	}
}

// syncBuffer is an io.Writer whose content can be read while it is
// written to.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestServeIO_Initialized_is_called_once_after_the_answer: the hook that
// starts what can wait (the sandbox's probe) runs once the answer to
// initialize is written, and only once though the client initializes
// twice; a ping before initialize does not call it.
func TestServeIO_Initialized_is_called_once_after_the_answer(t *testing.T) {
	t.Parallel()
	pool, err := orchestrator.AssemblePool(newGate().testTools(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	var calls []string // what out held at each call
	srv, err := New(Options{
		Pipeline: &orchestrator.Pipeline{Pool: pool}, Session: tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir()},
		Initialized: func() { calls = append(calls, out.String()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	initialize := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n", id)
	}
	in := `{"jsonrpc":"2.0","id":"first","method":"ping"}` + "\n" + initialize(1) + initialize(2) +
		`{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n"
	if err := srv.serveIO(t.Context(), strings.NewReader(in), out); err != nil {
		t.Fatalf("serveIO: %v", err)
	}
	if len(calls) != 1 {
		t.Fatalf("Initialized was called %d times, want once; the output:\n%s", len(calls), out.String())
	}
	lines := strings.Split(strings.TrimSpace(calls[0]), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"id":1,`) || !strings.Contains(last, `"protocolVersion"`) {
		t.Fatalf("when Initialized was called the output ended with %q, want the answer to initialize (id 1)", last)
	}
}

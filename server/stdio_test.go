package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
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

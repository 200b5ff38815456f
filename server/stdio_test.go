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
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"\nok\n"), 16)
	line, tooLong, err := readLine(r, 50)
	if !tooLong || line != nil || err != nil {
		t.Fatalf("first line: %q tooLong=%v err=%v, want skipped as too long", line, tooLong, err)
	}
	line, tooLong, err = readLine(r, 50)
	if string(line) != "ok" || tooLong || err != nil {
		t.Fatalf("second line: %q tooLong=%v err=%v, want \"ok\"", line, tooLong, err)
	}
}

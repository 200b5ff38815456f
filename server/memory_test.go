package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// stdioWriter serves the built-in tools on a stdio session (our stdio
// transport, the SDK's server, the pipeline) in a fresh directory, with
// the pipeline's input cap set to maxInput (0: the default).
type stdioWriter struct {
	srv  *Server
	dir  string
	in   *io.PipeWriter
	out  *bufio.Reader
	next int
}

// newBuiltinServer makes a server of the built-in tools working in a
// fresh directory (returned), bypassing permissions, with the input cap
// given (0: the default).
func newBuiltinServer(t *testing.T, maxInput int) (*Server, string) {
	t.Helper()
	pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srv, err := New(Options{Name: "agent-mcp", Version: "test", Pipeline: &orchestrator.Pipeline{Pool: pool, MaxInputBytes: maxInput},
		Session: tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir(), Mode: permissions.ModeBypassPermissions}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, dir
}

func newStdioWriter(t *testing.T, maxInput int) *stdioWriter {
	t.Helper()
	return newStdioSession(t, maxInput, "2025-11-25")
}

// newStdioSession is newStdioWriter's session initialized with the
// protocol version given.
func newStdioSession(t *testing.T, maxInput int, protocol string) *stdioWriter {
	t.Helper()
	srv, dir := newBuiltinServer(t, maxInput)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() { srv.serveIO(context.Background(), inR, outW); outW.Close(); close(done) }()
	t.Cleanup(func() { inW.Close(); io.Copy(io.Discard, outR); <-done; srv.Close() })
	w := &stdioWriter{srv: srv, dir: dir, in: inW, out: bufio.NewReader(outR)}
	w.roundTrip(t, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+protocol+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"))
	w.send(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"))
	return w
}

func (w *stdioWriter) send(t *testing.T, line []byte) {
	t.Helper()
	if _, err := w.in.Write(line); err != nil {
		t.Fatal(err)
	}
}

// roundTrip sends line and returns the next response.
func (w *stdioWriter) roundTrip(t *testing.T, line []byte) map[string]any {
	t.Helper()
	w.send(t, line)
	for {
		l, err := w.out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("the server wrote %q", l)
		}
		if _, ok := m["id"]; ok {
			return m
		}
	}
}

// writeLine is the tools/call line of a Write of content to name.
func (w *stdioWriter) writeLine(name, content string) []byte {
	w.next++
	args, _ := json.Marshal(map[string]any{"file_path": filepath.Join(w.dir, name), "content": content})
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": w.next, "method": "tools/call",
		"params": map[string]any{"name": "Write", "arguments": json.RawMessage(args)}})
	return append(msg, '\n')
}

// callText is a tools/call response's text and whether it is an error.
func callText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a tools/call result: %v", m)
	}
	content, _ := res["content"].([]any)
	var b strings.Builder
	for _, c := range content {
		if c, ok := c.(map[string]any); ok {
			s, _ := c["text"].(string)
			b.WriteString(s)
		}
	}
	isError, _ := res["isError"].(bool)
	return b.String(), isError
}

// TestStdio_large_write sends a 10MB Write through a stdio session and
// counts what the server allocates while it answers: the line reader (two
// copies: the line's pieces and the line; the message is built on the
// line and the call's large arguments held aside, so the MCP SDK decodes
// none of the content), schema validation (none: long strings stay out of
// its decoded copy) and the tool's input (one: decoded straight into its
// string; the tool itself copies nothing). It also checks an input over the cap is
// refused with the flag named and nothing written, and a message over the
// stdio line limit is answered by its id.
func TestStdio_large_write(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 10MB message")
	}
	t.Run("10MB", func(t *testing.T) {
		w := newStdioWriter(t, 0)
		const size = 10_000_000
		content := strings.Repeat("an ordinary line of generated content for the big write\n", size/56+1)[:size]
		line := w.writeLine("big.txt", content)
		runtime.GC()
		old := debug.SetGCPercent(-1)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res := w.roundTrip(t, line)
		runtime.ReadMemStats(&after)
		debug.SetGCPercent(old)
		if text, isErr := callText(t, res); isErr {
			t.Fatalf("the Write failed: %s", text)
		}
		if got, err := os.ReadFile(filepath.Join(w.dir, "big.txt")); err != nil || string(got) != content {
			t.Fatalf("the file holds %d bytes (%v), want the %d written", len(got), err, size)
		}
		copies := float64(after.TotalAlloc-before.TotalAlloc) / size
		t.Logf("the server allocated %.1f copies of the content answering the Write", copies)
		// About 3.1 (it was 24 with the SDK's own stdio reader): the bound
		// leaves room for other work of the process, and fails if the
		// content is decoded by the SDK again (3 copies a decode or more).
		if copies > 5 {
			t.Errorf("the server allocated %.1f copies of a Write's content, want at most 5", copies)
		}
	})
	t.Run("over_the_cap", func(t *testing.T) {
		w := newStdioWriter(t, 1<<20)
		text, isErr := callText(t, w.roundTrip(t, w.writeLine("over.txt", strings.Repeat("x", 2<<20))))
		if !isErr || !strings.Contains(text, "Invalid input for Write: the input is 2MB, over the largest accepted, 1MB (--max-input-bytes)") {
			t.Fatalf("a Write over the cap: %q", text)
		}
		if _, err := os.Stat(filepath.Join(w.dir, "over.txt")); err == nil {
			t.Error("the Write over the cap created its file")
		}
	})
	t.Run("over_the_line_limit", func(t *testing.T) {
		w := newStdioWriter(t, 1<<20) // the line limit is then the SDK's 16 MiB
		line := w.writeLine("huge.txt", strings.Repeat("x", 17<<20))
		res := w.roundTrip(t, line)
		e, _ := res["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if res["id"] != float64(w.next) || e["code"] != -32600.0 || !strings.Contains(msg, "--max-input-bytes") {
			t.Fatalf("a message over the line limit was answered %v, want error -32600 naming the flag, with id %d", res, w.next)
		}
		if _, err := os.Stat(filepath.Join(w.dir, "huge.txt")); err == nil {
			t.Error("the Write over the line limit created its file")
		}
		if text, isErr := callText(t, w.roundTrip(t, w.writeLine("small.txt", "small"))); isErr {
			t.Fatalf("the session did not go on: %s", text)
		}
	})
}

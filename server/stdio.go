package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioLineLimit bounds one inbound stdio message: the SDK's default, or
// room for the largest call input the pipeline accepts and the message
// around it, so a call over that limit is answered by the pipeline's
// error naming it, and a line longer still is skipped unread.
func (s *Server) stdioLineLimit() int {
	return max(mcp.DefaultMaxLineLength, s.cfg.Pipeline.InputLimit()+1<<20)
}

// stdioDrain bounds how long requests still running when stdin ends may
// take to answer before the session closes (an MCP client closes stdin to
// stop the server, and stops it harder if it lingers).
const stdioDrain = 5 * time.Second

// serveIO serves one session on in/out. Lines that are not JSON-RPC
// messages are answered with a JSON-RPC error (-32700 parse error, -32600
// invalid request) and dropped, so a client's bad line does not end the
// session, as it would if it reached the SDK's reader.
func (s *Server) serveIO(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out, pending: map[string]bool{}}
	pr, pw := io.Pipe()
	limit := s.stdioLineLimit()
	go guardLines(in, pw, w, limit, stdioDrain)
	return s.mcp.Run(ctx, &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: limit + 1})
}

// lockedWriter serialises whole-message writes (the SDK writes each
// message with one Write, and so do the guard's error replies) and keeps
// the ids of the client's requests not yet answered.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[string]bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) > 0 {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if json.Unmarshal(p, &m) == nil && m.Method == nil && len(m.ID) > 0 {
			delete(l.pending, string(m.ID))
		}
	}
	return l.w.Write(p)
}

// expect notes a request the client sent.
func (l *lockedWriter) expect(id json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[string(id)] = true
}

// waitAnswered waits up to d for every noted request to be answered.
func (l *lockedWriter) waitAnswered(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		n := len(l.pending)
		l.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Close does nothing: stdout outlives the session.
func (l *lockedWriter) Close() error { return nil }

// guardLines copies well-formed lines from in to pw and answers the rest
// on out, until in ends or the SDK stops reading. When in ends, requests
// still running get up to drain to answer before the SDK sees the end.
func guardLines(in io.Reader, pw *io.PipeWriter, out *lockedWriter, max int, drain time.Duration) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, skipped, err := readLine(r, max)
		switch {
		case skipped != nil:
			// Answered with the request's id when it can be found, so
			// the client's call ends with this error instead of waiting.
			writeRPCError(out, skipped.id(), -32600, fmt.Sprintf("Invalid Request: the message is over %d bytes, the most one may carry (the largest tool call input, --max-input-bytes, and 1 MiB around it); it was ignored", max))
		case len(bytes.TrimSpace(line)) > 0:
			id, code, msg := checkMessage(line)
			if code != 0 {
				writeRPCError(out, id, code, msg)
				break
			}
			if id != nil {
				out.expect(id)
			}
			if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the session ended
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				out.waitAnswered(drain)
				pw.Close()
			} else {
				pw.CloseWithError(err)
			}
			return
		}
	}
}

// readLine reads one line without its newline; a line over max bytes is
// skipped whole, only its first and last bytes kept (skipped). The line is
// gathered in pieces and joined once, into a slice with room for the
// newline put back when it is passed on: a long line (a Write's content)
// is copied twice, not the five times growing one slice would take.
func readLine(r *bufio.Reader, max int) (line []byte, skipped *skippedLine, err error) {
	var pieces [][]byte
	n := 0
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case skipped != nil:
			skipped.keepTail(chunk)
		case n+len(chunk) > max+1:
			skipped = &skippedLine{}
			for _, p := range pieces {
				skipped.keepHead(p)
			}
			skipped.keepHead(chunk)
			skipped.keepTail(chunk)
			pieces = nil
		default:
			pieces = append(pieces, bytes.Clone(chunk))
			n += len(chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if skipped != nil {
			return nil, skipped, err
		}
		line = make([]byte, 0, n+1)
		for _, p := range pieces {
			line = append(line, p...)
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil, err
	}
}

// skippedLine is what is kept of a line over the limit: its first and
// last bytes, where clients put a request's id.
type skippedLine struct{ head, tail []byte }

// skippedKeep is how many bytes of each end of a skipped line are kept.
const skippedKeep = 4 << 10

func (s *skippedLine) keepHead(p []byte) {
	if room := skippedKeep - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
}

func (s *skippedLine) keepTail(p []byte) {
	s.tail = append(s.tail, p...)
	if len(s.tail) > skippedKeep {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-skippedKeep:]...)
	}
}

// tailID matches a message's last member when it is the id: nothing but
// the object's closing brace follows it.
var tailID = regexp.MustCompile(`[{,]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)\s*}\s*$`)

// id finds the id of the request a skipped line held, or nil: a top-level
// "id" member read from the start of the message (members before it are
// read through, nested ones included, as far as the kept bytes go), or the
// last member when it is the id.
func (s *skippedLine) id() json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(s.head))
	dec.UseNumber()
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		for {
			key, err := dec.Token()
			if err != nil || key == json.Delim('}') {
				break
			}
			var val json.RawMessage
			if err := dec.Decode(&val); err != nil {
				break // the kept bytes end inside this member
			}
			if key == "id" {
				if validID(val) {
					return val
				}
				return nil
			}
		}
	}
	if m := tailID.FindSubmatch(bytes.TrimSuffix(s.tail, []byte("\n"))); m != nil && validID(m[1]) {
		return json.RawMessage(m[1])
	}
	return nil
}

// checkMessage reports why line is not a JSON-RPC message (with the id to
// answer, if one can be read), or code 0 if it is one, with the id of a
// request (nil for notifications and responses). Batches (arrays)
// pass through to the SDK, which knows which protocol versions allow them.
func checkMessage(line []byte) (id json.RawMessage, code int, msg string) {
	// Checked without building the message (a Write's content would be
	// copied twice more): valid JSON, then its first byte says its kind.
	if !json.Valid(line) {
		var probe any
		err := json.Unmarshal(line, &probe) // for the error's wording
		return nil, -32700, fmt.Sprintf("Parse error: the line is not valid JSON (%v); it was ignored", err)
	}
	switch bytes.TrimLeft(line, " \t\r\n")[0] {
	case '[':
		return nil, 0, ""
	case '{':
	default:
		return nil, -32600, "Invalid Request: a JSON-RPC message must be a JSON object"
	}
	var m struct {
		JSONRPC any             `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  any             `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(line, &m)
	if validID(m.ID) {
		id = m.ID
	}
	switch {
	case m.JSONRPC != "2.0":
		return id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`
	case m.Method != nil:
		if _, ok := m.Method.(string); !ok {
			return id, -32600, `Invalid Request: "method" must be a string`
		}
		if len(m.ID) > 0 && !validID(m.ID) {
			return nil, -32600, `Invalid Request: "id" must be a string or a number`
		}
		return id, 0, "" // a request (with its id) or a notification
	case len(m.Result) == 0 && len(m.Error) == 0:
		return id, -32600, `Invalid Request: a message needs a "method" (a request or notification) or a "result" or "error" (a response)`
	}
	return nil, 0, ""
}

func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// writeRPCError writes a JSON-RPC error response on one line.
func writeRPCError(out io.Writer, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	_, _ = out.Write(append(b, '\n'))
}

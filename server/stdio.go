package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
)

// stdioLineLimit bounds one inbound stdio message: the SDK's default, or
// room for the largest call input the pipeline accepts and the message
// around it, so a call over that limit is answered by the pipeline's
// error naming it, and a line longer still is skipped unread.
func (s *Server) stdioLineLimit() int {
	return max(mcp.DefaultMaxLineLength, s.cfg.Pipeline.InputLimit()+messageOverhead)
}

// stdioDrain bounds how long requests still running when stdin ends may
// take to answer before the session closes (an MCP client closes stdin to
// stop the server, and stops it harder if it lingers).
const stdioDrain = 5 * time.Second

// serveIO serves one session on in/out through a stdioConn: lines that are
// not JSON-RPC messages are answered with a JSON-RPC error (-32700 parse
// error, -32600 invalid request) and dropped, and the session goes on.
func (s *Server) serveIO(ctx context.Context, in io.Reader, out io.Writer) error {
	c := newStdioConn(in, out, s.stdioLineLimit(), stdioDrain, &s.held)
	c.initialized = s.cfg.Initialized
	c.tasks = newStdioTasks(s, c)
	return s.mcp.Run(ctx, stdioTransport{c})
}

// returnAfterLine is the length of a line after which the memory that
// reading it took is returned to the system at once (a forced collection:
// milliseconds, next to the seconds such a call takes).
const returnAfterLine = 512 << 10

// stdioTransport hands the SDK one stdioConn.
type stdioTransport struct{ c *stdioConn }

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// stdioConn is the MCP connection of a stdio session: newline-delimited
// JSON-RPC on in and out. It is ours rather than the SDK's so that a large
// message is held once: each line is read into one buffer and the message
// built on it (params, result and ids are slices of the line), where the
// SDK's reader buffers a line and decodes it again and again (about twenty
// copies of a 10MB Write's content). A tools/call's large arguments are
// held aside (see holdArguments), so the SDK decodes only the small
// envelope of the call.
type stdioConn struct {
	incoming  chan inbound // from the reading goroutine
	closed    chan struct{}
	closeOnce sync.Once
	// queue holds the rest of a batch; Read is never called concurrently.
	queue []jsonrpc.Message
	// held is the server's arguments held aside, by token.
	held *largeargs.Store

	mu  sync.Mutex // serialises writes to out and guards what follows
	out io.Writer
	// pending holds the client's requests not yet answered, answered is
	// signalled (without blocking) when one is.
	pending  map[jsonrpc.ID]bool
	answered chan struct{}
	// heldBy holds the tokens of each request's held arguments, dropped
	// when the request is answered or the connection closes.
	heldBy map[jsonrpc.ID][]string
	// batches correlates the requests of a batch, answered together.
	batches map[jsonrpc.ID]*rpcBatch
	// version is the protocol version the session negotiated, read from
	// the answer to initialize (initID).
	version string
	initID  *jsonrpc.ID
	// initialized, if set, is called once the answer to initialize has
	// been written (Options.Initialized).
	initialized func()
	// tasks, if set, is the connection's task layer (tasks_stdio.go): it
	// sees each message read and each response written.
	tasks *stdioTasks
}

// inbound is what the reading goroutine passes on: the messages of one
// line, or the error that ended the input.
type inbound struct {
	msgs []jsonrpc.Message
	err  error
}

// rpcBatch is a batch's responses, in the order of its requests.
type rpcBatch struct {
	index     map[jsonrpc.ID]int
	responses []*jsonrpc.Response
	left      int
}

func newStdioConn(in io.Reader, out io.Writer, limit int, drain time.Duration, held *largeargs.Store) *stdioConn {
	c := &stdioConn{
		incoming: make(chan inbound),
		closed:   make(chan struct{}),
		held:     held,
		out:      out,
		pending:  map[jsonrpc.ID]bool{},
		answered: make(chan struct{}, 1),
		heldBy:   map[jsonrpc.ID][]string{},
		batches:  map[jsonrpc.ID]*rpcBatch{},
	}
	go c.readLoop(in, limit, drain)
	return c
}

// readLoop reads in line by line until it ends or the connection closes,
// passing messages on and answering the lines that are not messages. When
// in ends, requests still running get up to drain to answer before Read
// reports the end.
func (c *stdioConn) readLoop(in io.Reader, limit int, drain time.Duration) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, skipped, err := readLine(r, limit)
		if len(line) >= returnAfterLine {
			// The line's pieces, joined, are garbage as large as the line:
			// returned to the system now, so that the content decoded next
			// does not come on top of them (a 10MB Write peaked at 4 times
			// its size, now 2).
			debug.FreeOSMemory()
		}
		var msgs []jsonrpc.Message
		switch {
		case skipped != nil:
			// Answered with the request's id when it can be found, so
			// the client's call ends with this error instead of waiting.
			c.replyError(skipped.id(), -32600, fmt.Sprintf("Invalid Request: the message is over %d bytes, the most one may carry (the largest tool call input, --max-input-bytes, and 1 MiB around it); it was ignored", limit))
		case len(bytes.TrimSpace(line)) > 0:
			msgs = c.decode(line)
		}
		if len(msgs) > 0 && !c.deliver(inbound{msgs: msgs}) {
			return // the connection closed
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.waitAnswered(drain)
			}
			c.deliver(inbound{err: err})
			return
		}
	}
}

func (c *stdioConn) deliver(in inbound) bool {
	select {
	case c.incoming <- in:
		return true
	case <-c.closed:
		return false
	}
}

// Read returns the next message from the client that the task layer
// passes on.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.readOne(ctx)
		if err != nil || c.tasks == nil {
			return m, err
		}
		if m, taken := c.tasks.take(m); !taken {
			return m, nil
		}
	}
}

// readOne returns the next message from the client.
func (c *stdioConn) readOne(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case in := <-c.incoming:
		if in.err != nil {
			return nil, in.err
		}
		c.queue = in.msgs[1:]
		return in.msgs[0], nil
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write sends msg to the client on one line (the responses of a batch
// together, once all are there).
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if c.tasks != nil && c.tasks.route(resp) {
			c.answer(resp)
			return nil
		}
		if c.answer(resp) && c.initialized != nil {
			// Called once, when the answer is out (before c.mu is
			// released: the function must not write).
			defer c.initialized()
			c.initialized = nil
		}
		if b, ok := c.batches[resp.ID]; ok {
			delete(c.batches, resp.ID)
			b.responses[b.index[resp.ID]] = resp
			if b.left--; b.left > 0 {
				return nil
			}
			data, err = encodeBatch(b.responses)
		}
	}
	if data == nil && err == nil {
		data, err = jsonrpc.EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	return c.writeLine(data)
}

// encodeBatch is the JSON array of a batch's responses.
func encodeBatch(responses []*jsonrpc.Response) ([]byte, error) {
	data := []byte{'['}
	for i, r := range responses {
		m, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, m...)
	}
	return append(data, ']'), nil
}

// writeLine writes data and a newline; c.mu is held.
func (c *stdioConn) writeLine(data []byte) error {
	if _, err := c.out.Write(data); err != nil {
		return err
	}
	_, err := c.out.Write([]byte{'\n'})
	return err
}

// answer notes that the request resp answers is answered: it is no longer
// pending, its held arguments are dropped, and the answer to initialize
// gives the session's protocol version; it reports whether resp is that
// answer. c.mu is held.
func (c *stdioConn) answer(resp *jsonrpc.Response) (initialize bool) {
	if c.pending[resp.ID] {
		delete(c.pending, resp.ID)
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	for _, token := range c.heldBy[resp.ID] {
		c.held.Drop(token)
	}
	delete(c.heldBy, resp.ID)
	if c.initID != nil && *c.initID == resp.ID {
		c.initID = nil
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if resp.Error == nil && json.Unmarshal(resp.Result, &r) == nil {
			c.version = r.ProtocolVersion
		}
		return true
	}
	return false
}

// Close ends the connection; the arguments it still holds are dropped.
// stdout outlives the session and is left open.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.mu.Lock()
		defer c.mu.Unlock()
		for id, tokens := range c.heldBy {
			for _, token := range tokens {
				c.held.Drop(token)
			}
			delete(c.heldBy, id)
		}
	})
	return nil
}

// SessionID is empty: a stdio session is the process's only one.
func (c *stdioConn) SessionID() string { return "" }

// waitAnswered waits up to d for every request read to be answered, or
// for the connection to close.
func (c *stdioConn) waitAnswered(d time.Duration) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-c.closed:
			return
		case <-deadline.C:
			return
		}
	}
}

// replyError answers on out with a JSON-RPC error.
func (c *stdioConn) replyError(id json.RawMessage, code int, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	writeRPCError(c.out, id, code, msg)
}

// decode builds the messages of a line, or answers it with the error that
// says why it is not a message (and returns none).
func (c *stdioConn) decode(line []byte) []jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		var probe any
		err := json.Unmarshal(line, &probe) // for the error's wording
		c.replyError(nil, -32700, fmt.Sprintf("Parse error: the line is not valid JSON (%v); it was ignored", err))
		return nil
	}
	switch line[0] {
	case '[':
		return c.decodeBatch(line)
	case '{':
	default:
		c.replyError(nil, -32600, "Invalid Request: a JSON-RPC message must be a JSON object")
		return nil
	}
	msg, id, code, text := decodeMessage(line)
	if code != 0 {
		c.replyError(id, code, text)
		return nil
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = true
		if req.Method == "initialize" && c.initID == nil {
			// The first one waiting for its answer: a second sent
			// before that is refused by the SDK.
			c.initID = &req.ID
		}
		c.mu.Unlock()
		if req.Method == "tools/call" {
			c.holdArguments(req)
		}
	}
	return []jsonrpc.Message{msg}
}

// batchesUntil is the first protocol version without JSON-RPC batches.
const batchesUntil = "2025-06-18"

// decodeBatch builds the messages of a batch (protocol versions before
// 2025-06-18) and notes its requests, to answer them together.
func (c *stdioConn) decodeBatch(line []byte) []jsonrpc.Message {
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if version >= batchesUntil {
		c.replyError(nil, -32600, fmt.Sprintf("Invalid Request: JSON-RPC batches are not part of MCP from protocol version %s on (this session's is %s); it was ignored", batchesUntil, version))
		return nil
	}
	var raws []json.RawMessage
	_ = json.Unmarshal(line, &raws) // valid JSON, an array
	if len(raws) == 0 {
		c.replyError(nil, -32600, "Invalid Request: the batch is empty")
		return nil
	}
	msgs := make([]jsonrpc.Message, len(raws))
	b := &rpcBatch{index: map[jsonrpc.ID]int{}}
	for i, raw := range raws {
		raw = bytes.TrimSpace(raw)
		if raw[0] != '{' {
			c.replyError(nil, -32600, fmt.Sprintf("Invalid Request: batch message %d is not a JSON object; the batch was ignored", i+1))
			return nil
		}
		msg, id, code, text := decodeMessage(raw)
		if code != 0 {
			c.replyError(id, code, fmt.Sprintf("%s (batch message %d; the batch was ignored)", text, i+1))
			return nil
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := b.index[req.ID]; dup {
				c.replyError(id, -32600, fmt.Sprintf("Invalid Request: the id of batch message %d repeats an earlier one's; the batch was ignored", i+1))
				return nil
			}
			b.index[req.ID] = len(b.responses)
			b.responses = append(b.responses, nil)
		}
		msgs[i] = msg
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range b.index {
		if c.pending[id] {
			c.mu.Unlock()
			c.replyError(nil, -32600, "Invalid Request: the batch repeats the id of a request still running; it was ignored")
			c.mu.Lock()
			return nil
		}
	}
	b.left = len(b.responses)
	for id := range b.index {
		c.pending[id] = true
		c.batches[id] = b
	}
	return msgs
}

// holdArguments keeps a large tools/call's arguments out of the SDK (see
// held.go): they are held under a placeholder, noted as the request's,
// until it is answered or the connection closes.
func (c *stdioConn) holdArguments(req *jsonrpc.Request) {
	edits, token, ok := c.held.HoldParams(req.Params, 0, "")
	if !ok {
		return
	}
	c.mu.Lock()
	c.heldBy[req.ID] = append(c.heldBy[req.ID], token)
	c.mu.Unlock()
	req.Params = largeargs.Apply(req.Params, edits)
}

// decodeMessage builds the JSON-RPC message msg, a JSON object, holds, or
// says why it is not one (code and text, with the id to answer when one
// can be read). Params, result and the error are slices of msg.
func decodeMessage(obj []byte) (msg jsonrpc.Message, id json.RawMessage, code int, text string) {
	m := members(obj)
	rawID, hasID := m["id"]
	if validID(rawID) {
		id = rawID
	}
	var version any
	_ = json.Unmarshal(m["jsonrpc"], &version)
	if version != "2.0" {
		return nil, id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`
	}
	if method, ok := m["method"]; ok && string(method) != "null" {
		var name string
		if json.Unmarshal(method, &name) != nil {
			return nil, id, -32600, `Invalid Request: "method" must be a string`
		}
		if hasID && id == nil {
			return nil, nil, -32600, `Invalid Request: "id" must be a string or a number`
		}
		return &jsonrpc.Request{ID: makeID(id), Method: name, Params: json.RawMessage(m["params"])}, id, 0, ""
	}
	result, hasResult := m["result"]
	rawErr, hasErr := m["error"]
	switch {
	case !hasResult && !hasErr:
		return nil, id, -32600, `Invalid Request: a message needs a "method" (a request or notification) or a "result" or "error" (a response)`
	case id == nil:
		return nil, nil, -32600, `Invalid Request: a response needs the "id" (a string or a number) of the request it answers`
	}
	resp := &jsonrpc.Response{ID: makeID(id), Result: json.RawMessage(result)}
	if hasErr && string(rawErr) != "null" {
		var e jsonrpc.Error
		if rawErr[0] != '{' || json.Unmarshal(rawErr, &e) != nil {
			return nil, id, -32600, `Invalid Request: "error" must be an object with a "code" and a "message"`
		}
		resp.Error = &e
	}
	return resp, nil, 0, ""
}

// makeID is the JSON-RPC id of raw, a valid id or nil.
func makeID(raw json.RawMessage) jsonrpc.ID {
	var v any
	if raw == nil || json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}
	}
	id, _ := jsonrpc.MakeID(v)
	return id
}

// members is the top-level members of obj, a valid JSON object, by name
// (the last of a repeated name), each value a slice of obj with no room
// after it. Names are matched exactly, as the SDK's decoder does.
func members(obj []byte) map[string][]byte {
	m := map[string][]byte{}
	for name, at := range largeargs.Members(obj) {
		m[name] = obj[at[0]:at[1]:at[1]]
	}
	return m
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
var tailID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[{,]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)\s*}\s*$`)
})

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
	if m := tailID().FindSubmatch(bytes.TrimSuffix(s.tail, []byte("\n"))); m != nil && validID(m[1]) {
		return json.RawMessage(m[1])
	}
	return nil
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

// ServeStdio serves one session on stdin/stdout until the client closes
// the stream or ctx ends, then closes every session. A line that is not a
// JSON-RPC message is answered with an error and the session goes on.
func (s *Server) ServeStdio(ctx context.Context) error {
	defer s.Close()
	err := s.serveIO(ctx, os.Stdin, os.Stdout)
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

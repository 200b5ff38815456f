package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox/proc"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agent-mcp/agent-mcp/sandbox"
)

// Restart backoff: the first restart after a crash is immediate, each
// further one waits twice as long, up to restartMax; a server that stayed
// up restartReset is forgiven its crashes.
const (
	restartFirst = 500 * time.Millisecond
	restartMax   = 30 * time.Second
	restartReset = time.Minute
	startTimeout = 30 * time.Second
	stopGrace    = 2 * time.Second
	stderrKeep   = 4 << 10
)

// env is what a client needs of its session: where it may write, and the
// sandbox that confines it.
type env struct {
	sandbox *sandbox.Sandbox
	// excluded reports whether a command line runs outside the sandbox;
	// nil means none does.
	excluded func(line string) bool
	workDirs []string
	stateDir string
	// envAllow are the further variables a server gets (serverEnv).
	envAllow []string
}

// client is one language server process for one workspace root, started
// on first use and again after a crash.
type client struct {
	cfg  ServerConfig
	root string
	env  env

	// startMu serialises starts; mu guards the state below and is never
	// held while waiting on the server. uses stamps documents' use.
	startMu sync.Mutex
	mu      sync.Mutex
	proc    *process // nil while not running
	docs    map[DocumentURI]*document
	diags   map[DocumentURI]*published
	changed chan struct{} // closed and replaced at each publication
	uses    uint64
	warm    bool // the server has published diagnostics since it started
	closed  bool
	// crashes counts unexpected exits since the server last stayed up
	// restartReset; notBefore is when it may start again.
	crashes   int
	notBefore time.Time
	starts    int
	lastErr   string
}

// document is a file the server has open, at version, holding text;
// used orders documents by last use.
type document struct {
	version int32
	text    string
	used    uint64
}

// maxOpenDocs bounds the documents a server holds open: past it the
// least recently used is closed.
const maxOpenDocs = 64

// published is the latest diagnostics of a document: seq counts
// publications, so a waiter can tell a new one from the one it saw.
type published struct {
	seq     uint64
	version *int32
	diags   []Diagnostic
}

// process is a running server.
type process struct {
	cmd    *exec.Cmd
	launch *sandbox.Launch
	conn   *jsonrpc2.Conn
	pid    int
	done   chan struct{} // closed once the process has exited
	start  time.Time
	stderr *tail
	caps   json.RawMessage
	// stopping is set when the exit was asked for (not a crash).
	stopping atomic.Bool
}

func newClient(cfg ServerConfig, root string, e env) *client {
	return &client{cfg: cfg, root: root, env: e, docs: map[DocumentURI]*document{},
		diags: map[DocumentURI]*published{}, changed: make(chan struct{})}
}

// ensure returns the running server, starting it (again) if needed. After
// a crash it waits out the backoff, as long as ctx allows.
func (c *client) ensure(ctx context.Context) (*process, error) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.mu.Lock()
	closed, p := c.closed, c.proc
	if p != nil && p.exited() {
		// It died, and its watcher has not recorded it yet.
		c.proc, p = nil, nil
	}
	wait := time.Until(c.notBefore)
	c.mu.Unlock()
	switch {
	case closed:
		return nil, errors.New("the session is closing")
	case p != nil:
		return p, nil
	}
	if dl, ok := ctx.Deadline(); ok && wait > 0 && time.Now().Add(wait).After(dl) {
		// The backoff outlasts the caller's patience: say so now rather
		// than wait for nothing.
		return nil, fmt.Errorf("%s is restarting after a crash (next try in %s)", c.cfg.Command, wait.Round(100*time.Millisecond))
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s is restarting after a crash: %w", c.cfg.Command, ctx.Err())
		case <-t.C:
		}
	}
	p, err := c.start(ctx)
	c.mu.Lock()
	if err != nil {
		c.lastErr = err.Error()
		c.crashed()
		c.mu.Unlock()
		return nil, err
	}
	if c.closed {
		c.mu.Unlock()
		c.kill(p)
		return nil, errors.New("the session is closing")
	}
	c.proc = p
	c.mu.Unlock()
	return p, nil
}

// crashed records an unexpected end and sets the backoff; under c.mu.
func (c *client) crashed() {
	c.crashes++
	d := restartFirst << (c.crashes - 1)
	if c.crashes > 8 || d > restartMax {
		d = restartMax
	}
	if c.crashes == 1 {
		d = 0
	}
	c.notBefore = time.Now().Add(d)
}

// start runs the server (through the sandbox's launcher when one
// confines commands, as Bash's commands are) and initialises it; under
// c.startMu.
func (c *client) start(ctx context.Context) (*process, error) {
	argv := append([]string{c.cfg.Command}, c.cfg.Args...)
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	line := strings.Join(quoted, " ")
	shell, err := exec.LookPath("bash")
	if err != nil {
		shell = "/bin/sh"
	}
	excluded := c.env.excluded != nil && c.env.excluded(line)
	launch, err := c.env.sandbox.Command(sandbox.Spec{
		Shell: shell, Script: "exec " + line, Excluded: excluded, Dir: c.root,
		WorkDirs: c.env.workDirs, StateDir: c.env.stateDir, ReadOnly: !c.cfg.WritesWorkspace,
	}, stopGrace)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.cfg.Command, err)
	}
	cmd := launch.Cmd
	cmd.Dir = c.root
	cmd.Env = launch.Environ(serverEnv(c.env.envAllow))
	if !excluded && c.env.sandbox.Confines() && c.env.stateDir != "" {
		// gopls keeps its cache under the user's cache directory, which
		// the sandbox holds read-only.
		cmd.Env = append(cmd.Env, "GOPLSCACHE="+filepath.Join(c.env.stateDir, "gopls-cache"))
	}
	for k, v := range c.cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	proc.OwnGroup(cmd.SysProcAttr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		launch.Started(err)
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		launch.Started(err)
		return nil, err
	}
	errTail := &tail{}
	cmd.Stderr = errTail
	err = cmd.Start()
	launch.Started(err)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.cfg.Command, err)
	}
	p := &process{cmd: cmd, launch: launch, pid: cmd.Process.Pid, done: make(chan struct{}), start: time.Now(), stderr: errTail}
	stream := jsonrpc2.NewBufferedStream(pipe{stdout, stdin}, jsonrpc2.VSCodeObjectCodec{})
	p.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(c.handle))
	c.mu.Lock()
	c.starts++
	c.warm = false
	clear(c.docs)
	clear(c.diags)
	c.mu.Unlock()
	go c.watch(p)
	go func() {
		// A server whose connection ended (it closed its output, or sent
		// what does not parse) is of no more use: end it, so that the
		// next request starts another.
		<-p.conn.DisconnectNotify()
		select {
		case <-p.done:
			return
		case <-time.After(stopGrace):
		}
		if !p.stopping.Load() {
			_ = proc.Signal(p.pid, syscall.SIGKILL)
		}
	}()

	ictx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	rootURI := fileURI(c.root)
	pid := int32(os.Getpid())
	params := InitializeParams{
		ProcessID: &pid, ClientInfo: json.RawMessage(`{"name":"agent-mcp"}`), RootURI: &rootURI,
		Capabilities:          json.RawMessage(clientCapabilities),
		InitializationOptions: c.cfg.InitializationOptions,
		WorkspaceFolders:      []WorkspaceFolder{{URI: rootURI, Name: filepath.Base(c.root)}},
	}
	var res InitializeResult
	if err := p.conn.Call(ictx, "initialize", params, &res); err != nil {
		c.kill(p)
		return nil, fmt.Errorf("initializing %s in %s: %w%s", c.cfg.Command, c.root, err, p.stderr.say())
	}
	p.caps = res.Capabilities
	if err := p.conn.Notify(ictx, "initialized", struct{}{}); err != nil {
		c.kill(p)
		return nil, fmt.Errorf("initializing %s: %w", c.cfg.Command, err)
	}
	if len(c.cfg.Settings) > 0 {
		_ = p.conn.Notify(ictx, "workspace/didChangeConfiguration", DidChangeConfigurationParams{Settings: c.cfg.Settings})
	}
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// withProcess runs f with the running server, and once more with a new
// one when the server turns out to have died meanwhile (killed, crashed).
func (c *client) withProcess(ctx context.Context, f func(*process) error) error {
	for attempt := 0; ; attempt++ {
		p, err := c.ensure(ctx)
		if err != nil {
			return err
		}
		err = f(p)
		if err == nil || attempt == 1 || ctx.Err() != nil {
			return err
		}
		select {
		case <-p.conn.DisconnectNotify():
			// The connection ended: the process is ending too (its
			// stdout closed first); wait until it is reaped.
			select {
			case <-p.done:
			case <-ctx.Done():
				return err
			}
		default:
			if peerGone(err) {
				// A write found the server's end closed before its
				// reader saw the end of its output: it is ending.
				select {
				case <-p.done:
				case <-ctx.Done():
					return err
				}
			}
		}
		if !p.exited() {
			return err
		}
	}
}

// peerGone reports whether err says the server's end of the connection is
// closed (a killed server: the write of the next message fails before the
// reader has seen its output end).
func peerGone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, jsonrpc2.ErrClosed) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed)
}

// watch waits for the process to end and records a crash when nobody
// asked it to.
func (c *client) watch(p *process) {
	if p.launch != nil {
		p.launch.Wait()
	} else {
		_ = p.cmd.Wait()
	}
	p.conn.Close()
	close(p.done)
	c.mu.Lock()
	if c.proc == p {
		c.proc = nil
	}
	if !p.stopping.Load() && !c.closed {
		if time.Since(p.start) > restartReset {
			c.crashes = 0
		}
		c.lastErr = "exited unexpectedly" + p.stderr.say()
		c.crashed()
	}
	ch := c.changed
	c.changed = make(chan struct{})
	c.mu.Unlock()
	close(ch)
}

// handle answers the server's requests and takes its notifications.
func (c *client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p PublishDiagnosticsParams
		if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil {
			return nil, nil
		}
		c.mu.Lock()
		prev := c.diags[p.URI]
		seq := uint64(1)
		if prev != nil {
			seq = prev.seq + 1
		}
		c.diags[p.URI] = &published{seq: seq, version: p.Version, diags: p.Diagnostics}
		c.warm = true
		ch := c.changed
		c.changed = make(chan struct{})
		c.mu.Unlock()
		close(ch)
		return nil, nil
	case "workspace/configuration":
		var p ConfigurationParams
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		out := make([]json.RawMessage, len(p.Items))
		for i, it := range p.Items {
			out[i] = section(c.cfg.Settings, it.Section)
		}
		return out, nil
	case "workspace/workspaceFolders":
		return []WorkspaceFolder{{URI: fileURI(c.root), Name: filepath.Base(c.root)}}, nil
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh":
		return nil, nil
	}
	if req.Notif {
		return nil, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "agent-mcp does not handle " + req.Method}
}

// section looks a dotted section up in the settings object; null when
// absent.
func section(settings json.RawMessage, name string) json.RawMessage {
	null := json.RawMessage("null")
	if len(settings) == 0 {
		return null
	}
	if name == "" {
		return settings
	}
	cur := settings
	for _, part := range strings.Split(name, ".") {
		var m map[string]json.RawMessage
		if json.Unmarshal(cur, &m) != nil {
			return null
		}
		v, ok := m[part]
		if !ok {
			return null
		}
		cur = v
	}
	return cur
}

// sync makes the server hold text for the document at path, opening it
// or sending the whole new text; it returns the document's version and
// the publication count before the change, for waitDiagnostics.
func (c *client) sync(ctx context.Context, p *process, path, lang, text string) (version int32, seq uint64, err error) {
	uri := fileURI(path)
	c.mu.Lock()
	d := c.docs[uri]
	if pub := c.diags[uri]; pub != nil {
		seq = pub.seq
	}
	c.uses++
	if d != nil && d.text == text {
		d.used = c.uses
		v := d.version
		c.mu.Unlock()
		return v, 0, nil
	}
	var evict DocumentURI
	if d == nil {
		d = &document{}
		c.docs[uri] = d
		if len(c.docs) > maxOpenDocs {
			for u, o := range c.docs {
				if u != uri && (evict == "" || o.used < c.docs[evict].used) {
					evict = u
				}
			}
			delete(c.docs, evict)
			delete(c.diags, evict)
		}
	}
	d.used = c.uses
	opened := d.version > 0
	d.version++
	d.text = text
	version = d.version
	c.mu.Unlock()
	if evict != "" {
		_ = p.conn.Notify(ctx, "textDocument/didClose", DidCloseTextDocumentParams{TextDocument: TextDocumentIdentifier{URI: evict}})
	}
	if !opened {
		err = p.conn.Notify(ctx, "textDocument/didOpen", DidOpenTextDocumentParams{TextDocument: TextDocumentItem{
			URI: uri, LanguageID: lang, Version: version, Text: text}})
	} else {
		// TextDocumentContentChangeEvent is a union: the whole text.
		var changes json.RawMessage
		if changes, err = json.Marshal([]struct {
			Text string `json:"text"`
		}{{text}}); err == nil {
			err = p.conn.Notify(ctx, "textDocument/didChange", DidChangeTextDocumentParams{
				TextDocument:   VersionedTextDocumentIdentifier{URI: uri, Version: version},
				ContentChanges: changes})
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("sending %s to %s: %w", path, c.cfg.Command, err)
	}
	return version, seq, nil
}

// saved tells the server the document at path was written.
func (c *client) saved(ctx context.Context, p *process, path string) {
	_ = p.conn.Notify(ctx, "textDocument/didSave", DidSaveTextDocumentParams{TextDocument: TextDocumentIdentifier{URI: fileURI(path)}})
}

// errGaveUp is returned when no diagnostics came in time.
var errGaveUp = errors.New("no diagnostics in time")

// waitDiagnostics waits until the server publishes diagnostics for the
// document at path at version or later, newer than publication seq (0:
// any publication for the version will do), or until deadline.
func (c *client) waitDiagnostics(ctx context.Context, p *process, path string, version int32, seq uint64, deadline time.Time) ([]Diagnostic, error) {
	uri := fileURI(path)
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		c.mu.Lock()
		pub := c.diags[uri]
		ch := c.changed
		c.mu.Unlock()
		if pub != nil && (pub.version != nil && *pub.version >= version || pub.version == nil && pub.seq > seq) {
			return pub.diags, nil
		}
		select {
		case <-ch:
		case <-p.done:
			return nil, fmt.Errorf("%s exited", c.cfg.Command)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, errGaveUp
		}
	}
}

// isWarm reports whether the running server has published diagnostics.
func (c *client) isWarm() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc != nil && c.warm
}

// call sends a request to the server, starting it if needed, after
// syncing the document at path with its content on disk.
func (c *client) call(ctx context.Context, path, lang string, method string, params, result any) error {
	return c.withProcess(ctx, func(p *process) error {
		if path != "" {
			data, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("reading %s: %w", path, err)
			}
			if _, _, err := c.sync(ctx, p, path, lang, string(data)); err != nil {
				return err
			}
		}
		if err := p.conn.Call(ctx, method, params, result); err != nil {
			return fmt.Errorf("%s %s: %w", c.cfg.Command, method, err)
		}
		return nil
	})
}

// stop ends the server: shutdown and exit, then SIGTERM and SIGKILL to
// its process group if it lingers.
func (c *client) stop() {
	c.mu.Lock()
	c.closed = true
	p := c.proc
	c.proc = nil
	c.mu.Unlock()
	if p == nil {
		return
	}
	p.stopping.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	if p.conn.Call(ctx, "shutdown", nil, nil) == nil {
		_ = p.conn.Notify(ctx, "exit", nil)
	}
	select {
	case <-p.done:
		return
	case <-time.After(stopGrace):
	}
	c.kill(p)
}

// kill ends the process group of p and waits for it.
func (c *client) kill(p *process) {
	p.stopping.Store(true)
	_ = proc.Signal(p.pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(stopGrace):
	}
	_ = proc.Signal(p.pid, syscall.SIGKILL)
	<-p.done
}

// serverEnv is a server's environment: of the agent-mcp server's, what
// Bash's commands get (proc.CommandEnv and the names allow adds, never
// proc.SecretEnv), without what would make the bash that starts it run a
// file first (BASH_ENV, ENV).
func serverEnv(allow []string) []string {
	var env []string
	for _, kv := range proc.Allowed(os.Environ(), allow) {
		k, _, _ := strings.Cut(kv, "=")
		if k == "BASH_ENV" || k == "ENV" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// pipe joins the server's stdout and stdin into one stream.
type pipe struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipe) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p pipe) Close() error {
	err := p.w.Close()
	if e := p.ReadCloser.Close(); err == nil {
		err = e
	}
	return err
}

// tail keeps the last stderrKeep bytes a server wrote to stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > stderrKeep {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-stderrKeep:]...)
	}
	return len(b), nil
}

// say is ": <last stderr line>" or "".
func (t *tail) say() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return " (stderr: " + s + ")"
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

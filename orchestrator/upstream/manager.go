package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox/proc"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Default timeouts.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 10 * time.Minute
)

// Options configure a Manager.
type Options struct {
	// ConnectTimeout bounds starting a server and listing its tools.
	ConnectTimeout time.Duration
	// CallTimeout bounds one tool call (0: DefaultCallTimeout).
	CallTimeout time.Duration
	// ClientName and ClientVersion are sent at initialization.
	ClientName, ClientVersion string
	// Logger receives warnings (a server failed, died, was restarted).
	Logger *slog.Logger
	// HTTPClient reaches HTTP and SSE servers; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// State is a server's connection state.
type State string

// Server states.
const (
	Connected State = "connected"
	Failed    State = "failed"
	Stopped   State = "stopped" // was connected, then died; restarted on next use
)

// Status describes a server for /mcp and stream-json's init message.
type Status struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	State State  `json:"status"`
	// Error is why the server failed or stopped.
	Error string `json:"error,omitempty"`
	// Tools is how many tools the server offers.
	Tools int `json:"tools"`
}

// Manager owns the connections to the upstream servers and the pool tools
// adapted from theirs. It is safe for concurrent use.
type Manager struct {
	opts    Options
	servers []*server
	changed atomic.Bool

	names sync.Mutex         // guards owner
	owner map[string]*server // pool name → the server whose tool has it
}

// Start connects to every server at once, each within the connect
// timeout. A server that fails is logged as a warning with its reason and
// left out; the others work.
func Start(ctx context.Context, cfgs []ServerConfig, opts Options) *Manager {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ClientName == "" {
		opts.ClientName = "agent-mcp"
	}
	m := &Manager{opts: opts, owner: map[string]*server{}}
	for _, c := range cfgs {
		m.servers = append(m.servers, &server{m: m, cfg: c})
	}
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A failure is kept in the server's Status, which the caller
			// reports (once); it is not logged here as well.
			_ = s.connect(ctx)
		}()
	}
	wg.Wait()
	m.changed.Store(false)
	return m
}

// Tools returns the adapted tools of every server that listed its tools,
// with unique names. A stopped stdio server keeps its tools: calling one
// restarts it.
func (m *Manager) Tools() []*tools.Tool {
	var out []*tools.Tool
	for _, s := range m.servers {
		s.mu.Lock()
		out = append(out, s.tools...)
		s.mu.Unlock()
	}
	return out
}

// Changed reports whether any server's tool list changed since the last
// call (notifications/tools/list_changed, or a restart), and resets it.
func (m *Manager) Changed() bool { return m.changed.Swap(false) }

// Status lists every server, sorted by name.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := Status{Name: s.cfg.Name, Type: s.cfg.Type, State: s.state, Tools: len(s.tools)}
		if s.err != nil {
			st.Error = s.err.Error()
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close disconnects every server (stdio servers are stopped).
func (m *Manager) Close() {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
}

// server is one upstream server and its connection.
type server struct {
	m   *Manager
	cfg ServerConfig

	mu      sync.Mutex
	session *mcp.ClientSession
	state   State
	err     error
	tools   []*tools.Tool
	stderr  *tail
	// progress routes notifications/progress to the running calls.
	progress map[string]tools.Progress
	seq      int
	// connecting serialises (re)connection.
	connecting sync.Mutex
	// raw sends requests of chat's own on rawSession (tasks.go); nil
	// when the transport cannot.
	raw        rawCaller
	rawSession *mcp.ClientSession
}

func (s *server) logger() *slog.Logger { return s.m.opts.Logger }

// connect starts or reaches the server, initializes the session and lists
// its tools.
func (s *server) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go s.refresh()
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			s.onProgress(req.Params)
		},
	})
	var transport mcp.Transport
	httpClient := s.m.opts.HTTPClient
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	if len(s.cfg.Headers) > 0 {
		httpClient = &http.Client{Transport: headerTransport{base: httpClient.Transport, headers: s.cfg.Headers}, Timeout: httpClient.Timeout}
	}
	errTail := &tail{}
	// A stdio server's process is killed if it does not answer within the
	// connect timeout; a connected one is stopped by closing its session.
	procCtx, kill := context.WithCancel(context.WithoutCancel(ctx))
	switch s.cfg.Type {
	case "stdio":
		cmd := exec.CommandContext(procCtx, s.cfg.Command, s.cfg.Args...)
		cmd.Env = os.Environ()
		for k, v := range s.cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = errTail
		// A process group of its own: Ctrl-C at chat's terminal signals the
		// foreground group, and must cancel the turn, not kill the server.
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		proc.OwnGroup(cmd.SysProcAttr)
		transport = &rawTransport{inner: &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}
	case "sse":
		transport = &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: httpClient}
	default:
		transport = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: httpClient}
	}
	fail := func(err error) error {
		if t := errTail.String(); t != "" {
			err = fmt.Errorf("%w (stderr: %s)", err, t)
		}
		kill()
		s.mu.Lock()
		s.state, s.err = Failed, err
		s.mu.Unlock()
		return err
	}
	// The connection outlives this call (an SSE stream is bound to the
	// context it was opened with), so Connect gets an uncancelled context
	// and the timeout is enforced here.
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	ch := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(context.WithoutCancel(ctx), transport, nil)
		ch <- connected{cs, err}
	}()
	var cs *mcp.ClientSession
	select {
	case r := <-ch:
		if r.err != nil {
			return fail(describeConnectError(s.cfg, r.err))
		}
		cs = r.cs
	case <-ctx.Done():
		kill()
		go func() {
			if r := <-ch; r.cs != nil {
				_ = r.cs.Close()
			}
		}()
		return fail(fmt.Errorf("no answer within %s (the connect timeout)", s.m.opts.ConnectTimeout))
	}
	remote, err := listTools(ctx, cs)
	if err != nil {
		_ = cs.Close()
		return fail(fmt.Errorf("listing tools: %w", err))
	}
	s.mu.Lock()
	s.session, s.state, s.err, s.stderr = cs, Connected, nil, errTail
	s.raw, s.rawSession = rawCallerOf(transport, cs, s.cfg, httpClient, s.onProgress), cs
	s.setTools(remote)
	s.mu.Unlock()
	go func() {
		s.watch(cs)
		kill() // the session ended: make sure the process is gone
	}()
	return nil
}

func describeConnectError(cfg ServerConfig, err error) error {
	if cfg.Type == "stdio" {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return fmt.Errorf("cannot start %q: %v", cfg.Command, ee.Err)
		}
		return fmt.Errorf("starting %q: %w", cfg.Command, err)
	}
	return fmt.Errorf("connecting to %s: %w", cfg.URL, err)
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" {
			return out, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// setTools adapts the remote tools; s.mu is held. Names are made unique
// across every server of the manager.
func (s *server) setTools(remote []*mcp.Tool) {
	s.m.names.Lock()
	defer s.m.names.Unlock()
	taken := map[string]bool{}
	for name, o := range s.m.owner {
		if o == s {
			delete(s.m.owner, name)
		} else {
			taken[name] = true
		}
	}
	sort.Slice(remote, func(i, j int) bool { return remote[i].Name < remote[j].Name })
	s.tools = s.tools[:0:0]
	for _, rt := range remote {
		if rt == nil || rt.Name == "" {
			continue
		}
		name := ToolName(s.cfg.Name, rt.Name, taken)
		s.m.owner[name] = s
		s.tools = append(s.tools, adapt(s, name, rt))
	}
	s.m.changed.Store(true)
}

// refresh re-lists the tools after notifications/tools/list_changed.
func (s *server) refresh() {
	s.mu.Lock()
	cs := s.session
	s.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.ConnectTimeout)
	defer cancel()
	remote, err := listTools(ctx, cs)
	if err != nil {
		s.logger().Warn(fmt.Sprintf("MCP server %q: refreshing its tools: %v", s.cfg.Name, err))
		return
	}
	s.mu.Lock()
	if s.session == cs {
		s.setTools(remote)
	}
	s.mu.Unlock()
}

// watch marks the server stopped when its connection ends on its own.
func (s *server) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != cs {
		return
	}
	s.session = nil
	if s.state == Connected {
		reason := "the connection closed"
		if t := s.stderr.String(); t != "" {
			reason += " (stderr: " + t + ")"
		} else if err != nil {
			reason += ": " + err.Error()
		}
		s.state, s.err = Stopped, errors.New(reason)
		s.logger().Warn(fmt.Sprintf("MCP server %q stopped: %s; it will be restarted on next use", s.cfg.Name, reason))
	}
}

// ensure returns a live session, restarting the server if it stopped.
func (s *server) ensure(ctx context.Context) (*mcp.ClientSession, error) {
	s.connecting.Lock()
	defer s.connecting.Unlock()
	s.mu.Lock()
	cs, state, lastErr := s.session, s.state, s.err
	s.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	if err := s.connect(ctx); err != nil {
		if state == Stopped {
			return nil, fmt.Errorf("MCP server %q stopped (%v) and could not be restarted: %w", s.cfg.Name, lastErr, err)
		}
		return nil, fmt.Errorf("MCP server %q is unavailable: %w", s.cfg.Name, err)
	}
	if state == Stopped {
		s.logger().Info(fmt.Sprintf("MCP server %q restarted", s.cfg.Name))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session, nil
}

// rawCallerOf is how chat sends requests of its own to a server on
// transport (see rawcall.go), or nil.
func rawCallerOf(transport mcp.Transport, cs *mcp.ClientSession, cfg ServerConfig, httpClient *http.Client, onProgress func(*mcp.ProgressNotificationParams)) rawCaller {
	switch t := transport.(type) {
	case *rawTransport:
		if c := t.conn.Load(); c != nil {
			return c
		}
	case *mcp.StreamableClientTransport:
		// Only a server of 2026-07-28 or later keeps no session, so that a
		// request may travel on its own.
		if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion >= taskVersion {
			return &httpCaller{url: cfg.URL, client: httpClient, version: ir.ProtocolVersion, onProgress: onProgress}
		}
	}
	return nil
}

// call runs one tool call on the server within the call timeout. With a
// server that offers tasks, the call may become one (tasks.go): each
// request about it is bounded by the call timeout, the task by the
// server's TTL.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage, progress tools.Progress, uc *tools.UseContext) (*mcp.CallToolResult, error) {
	cs, err := s.ensure(ctx)
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.m.opts.CallTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if progress != nil {
		s.mu.Lock()
		s.seq++
		token := fmt.Sprintf("agent-mcp-%d", s.seq)
		if s.progress == nil {
			s.progress = map[string]tools.Progress{}
		}
		s.progress[token] = progress
		s.mu.Unlock()
		params.SetProgressToken(token)
		defer func() {
			s.mu.Lock()
			delete(s.progress, token)
			s.mu.Unlock()
		}()
	}
	var res *mcp.CallToolResult
	if raw, version := s.tasksCaller(cs); raw != nil {
		token, _ := params.GetProgressToken().(string)
		// Each request is timed on its own (timed): the task may outlive
		// the call timeout.
		ctx = parent
		res, err = s.callAsTask(ctx, raw, version, tool, args, token, progress, uc)
	} else {
		res, err = cs.CallTool(ctx, params)
	}
	if err == nil {
		return res, nil
	}
	switch {
	case parent.Err() != nil:
		return nil, err
	case ctx.Err() != nil:
		return nil, fmt.Errorf("MCP server %q did not answer %s within %s (the call timeout)", s.cfg.Name, tool, s.m.opts.CallTimeout)
	}
	if s.dead(cs) {
		return nil, fmt.Errorf("MCP server %q stopped while running %s (%v); it will be restarted on next use", s.cfg.Name, tool, err)
	}
	return nil, fmt.Errorf("MCP server %q: %s: %w", s.cfg.Name, tool, err)
}

// dead reports whether cs has ended, waiting briefly for the watcher to
// notice a process that just exited.
func (s *server) dead(cs *mcp.ClientSession) bool {
	done := make(chan struct{})
	go func() { _ = cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == cs {
		s.session = nil
		s.state, s.err = Stopped, errors.New("the connection closed")
	}
	return true
}

func (s *server) onProgress(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, _ := p.ProgressToken.(string)
	s.mu.Lock()
	f := s.progress[token]
	s.mu.Unlock()
	if f != nil {
		f(tools.ProgressUpdate{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

func (s *server) close() {
	s.mu.Lock()
	cs := s.session
	s.session = nil
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
}

// headerTransport adds configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// tail keeps the last 1 KB written to it (a server's stderr), for error
// messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 1024 {
		t.buf = t.buf[len(t.buf)-1024:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(strings.Fields(string(t.buf)), " ")
}

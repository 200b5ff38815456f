package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/largeargs"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Options configure a Server.
type Options struct {
	// Name and Version are reported to clients in serverInfo.
	Name, Version string
	// Pipeline runs every call; its Pool is what tools/list shows.
	Pipeline *orchestrator.Pipeline
	// Session is the template for each new session (Cwd, WorkDirs, Mode,
	// StateRoot); ID is always made fresh.
	Session tools.SessionOptions
	// Logger receives server diagnostics (never stdout); nil discards them.
	Logger *slog.Logger
	// Instructions are sent to clients at initialization.
	Instructions string
	// StructuredOutput returns each result's output object as
	// structuredContent besides the content blocks. Off by default: hosts
	// such as Claude Code and Codex CLI show the model
	// JSON.stringify(structuredContent) instead of the text blocks when it
	// is present, so the model would read JSON rather than the text the
	// tools render for it (Read's numbered lines, Grep's "Found N files").
	StructuredOutput bool
	// DeferTools leaves anthropic/alwaysLoad off the core tools' _meta, so
	// hosts that defer tools (Claude Code) defer agent-mcp's as well: for
	// users with many servers, whose tools would crowd the model's
	// context. By default the core tools are loaded up front.
	DeferTools bool
	// Metrics, if set, records calls, decisions, questions and HTTP
	// responses (served at /metrics over HTTP); nil records nothing.
	Metrics *Metrics
	// Tracing, if set, sends a span per call (continuing a client's
	// traceparent); the pipeline's steps are its children when the
	// pipeline's Tracer is the same. Nil traces nothing.
	Tracing *Tracing
	// CustomizeMCP, if set, adjusts the go-sdk server options before the
	// server is built (the conformance fixture build adds completion and
	// subscription handlers this way). Production leaves it nil.
	CustomizeMCP func(*mcp.ServerOptions)
	// Tasks configure the Tasks extension (tasks.go): which tools' calls
	// become tasks, their TTL and poll interval.
	Tasks TaskOptions
	// Initialized, if set, is called once over stdio, just after the
	// answer to initialize has been written: the host that started the
	// server waits for that answer, so work that can wait (the sandbox's
	// probe) starts then rather than beside it.
	Initialized func()
}

// Server is an MCP server for the tool pool. One Server serves any number
// of MCP sessions, each with its own tools.Session.
type Server struct {
	cfg Options
	mcp *mcp.Server

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*tools.Session
	closed   bool
	// resultOwner and resultsOf track the persisted results registered as
	// resources: the session each URI belongs to, and each session's URIs
	// (see resources.go).
	resultOwner map[string]*tools.Session
	resultsOf   map[*tools.Session][]string

	// pending holds calls parked across multi round-trips, by requestState
	// token (see roundtrip.go).
	pending sync.Map

	// held holds the large arguments of tools/calls that the stdio
	// transport or the HTTP guard read, until the call is served (see
	// held.go).
	held largeargs.Store

	// principals keeps the state of requests that belong to no protocol
	// session (protocol 2026-07-28 over HTTP), by principal (see
	// principal.go).
	principals principals

	// tasks are the tools/calls served as tasks (see tasks.go).
	tasks taskStore

	// closing counts sessions being closed because their MCP session
	// ended or their principal was idle; Close waits for them.
	closing sync.WaitGroup
}

type calledNameKey struct{}

// New builds the server and registers every tool of the pool.
func New(cfg Options) (*Server, error) {
	if cfg.Pipeline == nil || cfg.Pipeline.Pool == nil {
		return nil, errors.New("server: a pipeline with a pool is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, sessions: map[*mcp.ServerSession]*tools.Session{}}
	cfg.Metrics.watch(s)
	mcpOpts := &mcp.ServerOptions{
		Instructions: cfg.Instructions,
		Logger:       cfg.Logger,
		Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true},
			// Persisted results come and go with the calls.
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			// The Tasks extension (tasks.go), served to requests that
			// declare it.
			Extensions: map[string]any{tasksExtension: map[string]any{}},
		},
	}
	declareLogging(mcpOpts.Capabilities)
	s.watchRoots(mcpOpts)
	if cfg.CustomizeMCP != nil {
		cfg.CustomizeMCP(mcpOpts)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version}, mcpOpts)
	s.addTools(cfg.Pipeline.Pool.Tools())
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "persisted-result",
		Title:       "Persisted tool result",
		Description: "The full text of a tool result that was too large to return inline.",
		MIMEType:    "text/plain",
		URITemplate: orchestrator.ResultURIPrefix + "{name}",
	}, s.readResult)
	s.mcp.AddReceivingMiddleware(s.aliasMiddleware)
	// A server built on this one that declares prompts (Capabilities) is
	// served as go-sdk does; undeclaredPrompts also lets prompts added
	// later through.
	if mcpOpts.Capabilities == nil || mcpOpts.Capabilities.Prompts == nil {
		s.mcp.AddReceivingMiddleware(undeclaredPrompts)
	}
	s.mcp.AddReceivingMiddleware(s.hideUnavailableTools)
	s.mcp.AddReceivingMiddleware(s.listResults)
	// Outermost: the held arguments are back before anything reads them.
	s.mcp.AddReceivingMiddleware(s.heldArguments)
	return s, nil
}

// addTools registers the pool's tools with the SDK, on as many goroutines
// as there are processors. AddTool decodes each tool's schema twice (to
// check its type, and for the HTTP header annotations): a tenth of a
// stdio start's CPU, before initialize can be answered. The SDK adds under
// its lock and lists tools sorted by name, so the order they are added in
// changes nothing a client sees; no session exists yet to be told.
func (s *Server) addTools(ts []*tools.Tool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ts)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ts); i = int(next.Add(1) - 1) {
				s.mcp.AddTool(mcpTool(ts[i], s.cfg.DeferTools), s.roundTrip(s.handler(ts[i])))
			}
		})
	}
	wg.Wait()
}

// undeclaredPrompts answers prompts/list and prompts/get with Method not
// found (-32601) while the server has no prompts: go-sdk declares the
// prompts capability only once a prompt is added, yet serves the methods
// on every server, and a method gated behind a capability the server did
// not declare is one it does not offer. A prompt added later (a server
// built on this one, such as the conformance fixtures) is declared and
// served as go-sdk does.
func undeclaredPrompts(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "prompts/list" && method != "prompts/get" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		list, err := next(ctx, "prompts/list", &mcp.ListPromptsRequest{Session: ss, Params: &mcp.ListPromptsParams{}})
		if r, ok := list.(*mcp.ListPromptsResult); err == nil && ok && len(r.Prompts) == 0 && r.NextCursor == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("Method not found: %s (this server offers no prompts and does not declare the prompts capability)", method)}
		}
		return next(ctx, method, req)
	}
}

// MCP returns the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// mcpTool describes t for tools/list. Its annotations are the tool's
// fixed facts: what holds for every call; its _meta what hosts need to
// offer it (toolMeta).
func mcpTool(t *tools.Tool, deferTools bool) *mcp.Tool {
	destructive := t.Destructive()
	openWorld := t.OpenWorld
	// The JSON known ahead, when there is: the SDK then neither marshals
	// the schema when the tool is added nor on each tools/list.
	var schema any = t.InputSchema
	if len(t.InputSchemaJSON) > 0 {
		schema = t.InputSchemaJSON
	}
	return &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: schema,
		Meta:        toolMeta(t, deferTools),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

// aliasMiddleware lets a tool be called by an old name: the call is routed
// to the tool, and the name that was used travels in the context so errors
// name what was called.
func (s *Server) aliasMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if t, found := s.cfg.Pipeline.Pool.Find(p.Name); found && t.Name != p.Name {
					ctx = context.WithValue(ctx, calledNameKey{}, p.Name)
					p.Name = t.Name
				}
			}
		}
		return next(ctx, method, req)
	}
}

// session returns the tools.Session of an MCP session, making it on first
// use and closing it when the MCP session ends.
func (s *Server) session(ss *mcp.ServerSession) (*tools.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, tools.ErrClosed
	}
	if ts, ok := s.sessions[ss]; ok {
		return ts, nil
	}
	opts := s.cfg.Session
	opts.ID = ss.ID()
	ts, err := tools.NewSession(opts)
	if err != nil {
		return nil, err
	}
	s.sessions[ss] = ts
	go func() {
		_ = ss.Wait()
		// Either Close already took this session (and closes it), or this
		// goroutine takes it and Close waits for it through s.closing, so
		// the server never exits with a session's processes half-killed.
		s.mu.Lock()
		_, mine := s.sessions[ss]
		delete(s.sessions, ss)
		if mine {
			s.closing.Add(1)
		}
		s.mu.Unlock()
		if !mine {
			return
		}
		defer s.closing.Done()
		s.closeState(ts)
	}()
	return ts, nil
}

// Close ends every session: their background processes are killed and
// their state removed. Further calls fail.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	sessions := make([]*tools.Session, 0, len(s.sessions))
	for _, ts := range s.sessions {
		sessions = append(sessions, ts)
	}
	s.sessions = map[*mcp.ServerSession]*tools.Session{}
	s.mu.Unlock()
	s.closeTasks()
	sessions = append(sessions, s.takePrincipals()...)
	s.pending.Range(func(token, v any) bool {
		s.pending.Delete(token)
		v.(*pendingCall).cancel()
		return true
	})
	var wg sync.WaitGroup
	for _, ts := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); s.closeState(ts) }()
	}
	wg.Wait()
	s.closing.Wait()
}

// useContext gathers what a tool may use for a call from this MCP session.
// The client's capabilities are the request's own from protocol
// 2026-07-28 on (its _meta declares them per request; a stdio session
// would otherwise keep its first request's), the session's before.
func (s *Server) useContext(req *mcp.CallToolRequest, ts *tools.Session, callID string) *tools.UseContext {
	ss := req.Session
	uc := &tools.UseContext{
		Session: ts,
		CallID:  callID,
		Logger:  clientLogger(ss),
	}
	if caps := req.ClientCapabilities(); caps != nil {
		if caps.Elicitation != nil {
			uc.Asker = s.cfg.Metrics.asker(elicitAsker{ss})
			if !clientRoundTrips(ss) {
				// Outside a request, over stdio or the session's
				// standalone stream; the sessionless protocol has none.
				uc.LaterAsker = uc.Asker
			}
		}
		s.addSampling(uc, ss, caps)
	}
	return uc
}

func (s *Server) handler(t *tools.Tool) mcp.ToolHandler {
	declared := map[string]bool{}
	if sch := t.InputSchema; sch != nil {
		for name := range sch.Properties {
			declared[name] = true
		}
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts, err := s.stateOf(req.Session, req.Extra)
		if err != nil {
			return nil, err
		}
		s.applyRoots(ctx, req.Session, ts)
		name := req.Params.Name
		if called, ok := ctx.Value(calledNameKey{}).(string); ok {
			name = called
		}
		// A fresh id per call: it names the call's persisted result, so it
		// must not repeat within the session.
		callID := tools.RandomID()[:16]
		if inline, ok := s.taskInline(req); ok {
			ctx = tools.WithMCPTask(ctx, inline)
		}
		uc := s.useContext(req, ts, callID)
		args := withoutHostParams(req.Params.Arguments, declared)
		began := time.Now()
		ctx, endSpan := s.cfg.Tracing.startCall(ctx, t.Name, req.Params.Meta)
		out := s.cfg.Pipeline.Run(ctx, uc, orchestrator.Call{ID: callID, Name: name, Input: args},
			progressSender(ctx, req))
		outcome := outcomeOf(out, out.Err != nil)
		endSpan(outcome, out.Err)
		s.cfg.Metrics.call(t.Name, outcome, out, time.Since(began))
		if out.Err != nil {
			if errors.Is(out.Err, orchestrator.ErrUnknownTool) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: out.Err.Error()}
			}
			return nil, out.Err
		}
		if out.Persisted != nil {
			s.publishResult(ts, out.Persisted, t.Name)
		}
		return toCallToolResult(out, s.cfg.StructuredOutput), nil
	}
}

// toCallToolResult renders an outcome for MCP: the model-facing text first,
// then extra blocks and a resource link to a persisted result; with
// structured set, the output object too, as structuredContent.
func toCallToolResult(out orchestrator.Outcome, structured bool) *mcp.CallToolResult {
	res := out.Result
	r := &mcp.CallToolResult{IsError: res.IsError}
	if res.Text != "" {
		r.Content = append(r.Content, &mcp.TextContent{Text: res.Text})
	}
	for _, c := range res.Extra {
		switch c.Kind {
		case tools.TextContent:
			r.Content = append(r.Content, &mcp.TextContent{Text: c.Text})
		case tools.ImageContent:
			r.Content = append(r.Content, &mcp.ImageContent{MIMEType: c.MIMEType, Data: c.Data})
		case tools.LinkContent:
			size := c.Size
			r.Content = append(r.Content, &mcp.ResourceLink{URI: c.URI, Name: c.Name, MIMEType: c.MIMEType, Size: &size})
		}
	}
	if p := out.Persisted; p != nil {
		size := p.Size
		r.Content = append(r.Content, &mcp.ResourceLink{
			URI: p.URI, Name: p.Name, MIMEType: "text/plain", Size: &size,
			Description: "Full output of the " + out.Tool.Name + " call",
		})
	}
	if structured && res.Output != nil && !res.IsError {
		r.StructuredContent = res.Output
	}
	if r.Content == nil {
		r.Content = []mcp.Content{}
	}
	return r
}

// progressSender turns tool progress into notifications/progress when the
// client sent a progress token; otherwise it is nil.
func progressSender(ctx context.Context, req *mcp.CallToolRequest) tools.Progress {
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	var mu sync.Mutex
	var last float64
	return func(u tools.ProgressUpdate) {
		mu.Lock()
		// Progress must increase with every notification.
		if u.Progress <= last {
			u.Progress = last + 1
		}
		last = u.Progress
		mu.Unlock()
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Progress: u.Progress, Total: u.Total, Message: u.Message,
		})
	}
}

// readResult serves a persisted result of the calling session.
func (s *Server) readResult(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	ts, err := s.stateOf(req.Session, req.Extra)
	if err != nil {
		return nil, err
	}
	path, ok := orchestrator.ResultPath(ts, uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: string(data)}}}, nil
}

// elicitAsker asks the user through MCP elicitation.
type elicitAsker struct{ ss *mcp.ServerSession }

func (a elicitAsker) Ask(ctx context.Context, message string, schema map[string]any) (tools.Answer, error) {
	params := &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: schema}
	res, handled, err := elicitRoundTrip(ctx, params)
	if !handled {
		res, err = a.ss.Elicit(ctx, params)
	}
	if err != nil {
		return tools.Answer{}, fmt.Errorf("asking the user: %w", err)
	}
	return tools.Answer{Action: res.Action, Content: res.Content}, nil
}

// ToolList describes the pool as tools/list does for a server whose
// Options.DeferTools is deferTools.
func ToolList(p *orchestrator.Pool, deferTools bool) []*mcp.Tool {
	ts := p.Tools()
	out := make([]*mcp.Tool, len(ts))
	for i, t := range ts {
		out[i] = mcpTool(t, deferTools)
	}
	return out
}

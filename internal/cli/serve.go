package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	xterm "golang.org/x/term"

	"github.com/agent-mcp/agent-mcp/internal/redact"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/server"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
	"github.com/agent-mcp/agent-mcp/tools/shell"
)

// workspaceFlags are the flags every command that runs tools shares.
type workspaceFlags struct {
	cwd         string
	addDirs     stringList
	mode        string
	maxParallel int
	stateDir    string
	maxTasks    int
	maxSrvTasks int
	sandbox     string
	lsp         string
	maxInput    int
	perm        permissionFlags
	web         webFlags
	// secretFiles are the server's own secret files (--token-file):
	// credential paths to every tool and command.
	secretFiles []string
	// env is what the command read of its AGENT_MCP_* variables.
	env environ
}

func (w *workspaceFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&w.cwd, "cwd", "", "the session's starting directory (default: the current directory)")
	fs.Var(&w.addDirs, "add-dir", "a further working directory (repeatable)")
	fs.StringVar(&w.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk or bypassPermissions (default: the settings' defaultMode, else default)")
	fs.IntVar(&w.maxParallel, "max-parallel", orchestrator.DefaultMaxParallel, "how many concurrency-safe calls may run at once per session")
	fs.StringVar(&w.stateDir, "state-dir", "", "where sessions keep persisted results and task output (default: a per-user temp directory)")
	fs.IntVar(&w.maxTasks, "max-background-tasks", shell.DefaultMaxBackgroundTasks, "how many background tasks (Bash run_in_background, or moved there at their timeout) one session may have running at once")
	fs.IntVar(&w.maxInput, "max-input-bytes", orchestrator.DefaultMaxInputBytes, "largest tool call input accepted, in bytes (a Write's or Edit's content is nearly all of it); larger calls are refused, so a call's memory is bounded")
	fs.IntVar(&w.maxSrvTasks, "max-server-background-tasks", shell.DefaultMaxServerBackgroundTasks, "how many background tasks the server may have running at once across all its sessions")
	fs.StringVar(&w.sandbox, "sandbox", "", "confine Bash commands with the kernel: auto (the layers this machine offers), required (refuse to start without Landlock) or off (default: auto, or off when the settings' sandbox.enabled is false)")
	fs.StringVar(&w.lsp, "lsp", "auto", "language servers for diagnostics after edits and the LSP tool: auto (lspServers in settings, the project's .lsp.json once trusted, and gopls, typescript-language-server, pyright, rust-analyzer or clangd found on PATH) or off")
	w.perm.add(fs)
	w.web.add(fs)
	w.env = readEnviron()
}

// toolOptions checks the flags and turns them into the built-in tools'
// options.
func (w *workspaceFlags) toolOptions() (builtin.Options, error) {
	if w.maxTasks < 1 {
		return builtin.Options{}, fmt.Errorf("--max-background-tasks must be at least 1, got %d", w.maxTasks)
	}
	if w.maxInput < 1 {
		return builtin.Options{}, fmt.Errorf("--max-input-bytes must be at least 1, got %d", w.maxInput)
	}
	if w.maxSrvTasks < 1 {
		return builtin.Options{}, fmt.Errorf("--max-server-background-tasks must be at least 1, got %d", w.maxSrvTasks)
	}
	opts, err := w.web.toolOptions()
	opts.MaxBackgroundTasks, opts.MaxServerBackgroundTasks = w.maxTasks, w.maxSrvTasks
	opts.DisableBackground = w.env.disableBackground
	return opts, err
}

// sessionOptions checks the flags and turns them into session options.
func (w *workspaceFlags) sessionOptions() (tools.SessionOptions, error) {
	if w.mode != "" {
		if _, err := permissions.ParseMode(w.mode); err != nil {
			return tools.SessionOptions{}, fmt.Errorf("--permission-mode: %w", err)
		}
	}
	var err error
	cwd := w.cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return tools.SessionOptions{}, err
		}
	}
	dirs := append([]string{cwd}, w.addDirs...)
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return tools.SessionOptions{}, err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		flagName := "--add-dir"
		if i == 0 {
			flagName = "--cwd"
		}
		st, err := os.Stat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return tools.SessionOptions{}, fmt.Errorf("%s %q does not exist", flagName, d)
		case err != nil:
			return tools.SessionOptions{}, fmt.Errorf("%s %q: %w", flagName, d, err)
		case !st.IsDir():
			return tools.SessionOptions{}, fmt.Errorf("%s %q is not a directory", flagName, d)
		}
		dirs[i] = abs
	}
	perm, err := w.permissionSetup(dirs[0])
	if err != nil {
		return tools.SessionOptions{}, err
	}
	dirs = perm.addDirs(dirs)
	return tools.SessionOptions{Cwd: dirs[0], WorkDirs: dirs[1:], Mode: perm.policy.Mode, StateRoot: w.stateDir}, nil
}

// buildPipeline assembles the pool and the pipeline every call goes through.
func buildPipeline(w *workspaceFlags, logger *slog.Logger) (*orchestrator.Pipeline, error) {
	return buildPipelineWith(w, logger, io.Discard, nil, nil)
}

// buildPipelineWith is buildPipeline saying the settings' warnings on
// warn, counting Bash's commands in stats (nil: not counted) and
// redacting secrets (the serve tokens) from results beside the
// environment's.
func buildPipelineWith(w *workspaceFlags, logger *slog.Logger, warn io.Writer, stats *shell.Stats, secrets []redact.Secret) (*orchestrator.Pipeline, error) {
	project := w.cwd
	if project == "" {
		project, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(project); err == nil {
		project = abs
	}
	perm, err := w.permissionSetup(project)
	if err != nil {
		return nil, err
	}
	perm.warnIgnored(warn)
	toolOpts, err := w.toolOptions()
	if err != nil {
		return nil, err
	}
	toolOpts.Sandbox, toolOpts.Excluded = perm.sandbox, perm.excluded
	toolOpts.EnvAllow = perm.settings.Sandbox.EnvAllow
	toolOpts.ShellStats = stats
	if toolOpts.LSP, err = w.lspService(perm, project); err != nil {
		return nil, err
	}
	pool, err := orchestrator.AssemblePool(builtin.Tools(toolOpts), nil, perm.filter())
	if err != nil {
		return nil, err
	}
	p := &orchestrator.Pipeline{Pool: pool, MaxParallel: w.maxParallel, MaxInputBytes: w.maxInput, Logger: logger}
	perm.wire(p, secrets...)
	return p, nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "serve [--http [--addr HOST:PORT]] [flags]",
		"Serves the tools over MCP: on stdin/stdout by default, so an MCP host can start it,\n"+
			"or over streamable HTTP at /mcp with --http (a bearer token is required).", stdout, stderr)
	var w workspaceFlags
	w.add(fs.FlagSet)
	var hf httpFlags
	hf.add(fs.FlagSet)
	logLevel := fs.String("log-level", "warn", "stderr log level: debug, info, warn or error")
	structured := fs.Bool("structured-output", false, "also return each result's data as structuredContent, for programs that want fields rather than text.\n"+
		"Off by default: hosts such as Claude Code and Codex CLI show the model the JSON of structuredContent\n"+
		"instead of the text blocks when it is present, so the model would lose the text the tools render for it")
	deferTools := addDeferToolsFlag(fs.FlagSet)
	otel := fs.Bool("otel", false, "send OpenTelemetry traces (a span per tool call, its pipeline steps as children, continuing a client's traceparent)\n"+
		"over OTLP/HTTP to the collector the standard OTEL_EXPORTER_OTLP_* variables name (default http://localhost:4318);\n"+
		"on by itself when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// serve needs no controlling terminal: without one, no command it
	// starts can reach the terminal (TIOCSTI), and none needs a session of
	// its own for that.
	shell.DropTerminal()
	startedGC := startupGC()
	defer startedGC()
	tokens, err := takeServeTokens(hf.token, hf.tokenFile, hf.clientTokens, stderr)
	if err != nil {
		return err
	}
	hf.token, hf.clientTokens = tokens.token, tokens.client
	w.secretFiles = secretFiles(hf.tokenFile)
	if hf.adminAddr != "" && !hf.enabled {
		return errors.New("--admin-addr serves probes and metrics beside the HTTP endpoint: use it with --http")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	sessOpts, err := w.sessionOptions()
	if err != nil {
		return err
	}
	stats := &shell.Stats{}
	pipeline, err := buildPipelineWith(&w, logger, stderr, stats, tokenSecrets(tokens))
	if err != nil {
		return err
	}
	var tracing *server.Tracing
	if *otel || server.TracingWanted(os.Getenv) {
		var stop func()
		if tracing, stop, err = startTracing(ctx, logger); err != nil {
			return err
		}
		pipeline.Tracer = tracing
		defer stop()
	}
	if hf.enabled {
		hf.metrics = server.NewMetrics()
		if err := hf.metrics.Register(shellCollectors(stats)...); err != nil {
			return err
		}
	}
	sayLayers, instructions := w.sandboxLine(sessOpts.Cwd, &hf, logger)
	// Over stdio the host waits for the answer to initialize: the line
	// (and the sandbox's probe behind it, child processes that would take
	// a core from that answer) waits for it, or for the input to end.
	initialized := make(chan struct{})
	srv, err := server.New(server.Options{
		Name: "agent-mcp", Version: version(), Pipeline: pipeline, Session: sessOpts, Logger: logger, Instructions: instructions,
		StructuredOutput: *structured, DeferTools: *deferTools, Metrics: hf.metrics, Tracing: tracing,
		Tasks:       hf.tasks(),
		Initialized: func() { startedGC(); close(initialized) },
	})
	if err != nil {
		return err
	}
	if !hf.enabled {
		return serveStdio(ctx, srv, initialized, sayLayers, stderr)
	}
	defer srv.Close()
	startedGC()
	return hf.serve(ctx, srv, sayLayers(), stderr)
}

// startTracing starts sending OpenTelemetry traces; stop sends the last
// ones (within five seconds) and ends it.
func startTracing(ctx context.Context, logger *slog.Logger) (tracing *server.Tracing, stop func(), err error) {
	if tracing, err = server.NewTracing(ctx, "", version()); err != nil {
		return nil, nil, err
	}
	return tracing, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(sctx); err != nil {
			logger.Warn("sending the last traces", "err", err)
		}
	}, nil
}

// sandboxLine returns the function that says, in one line, which sandbox
// layers hold Bash, and the instructions the server gives hosts about
// the sandbox; it sets hf's readiness check to the sandbox's. A person at
// a terminal and the HTTP mode's start-up lines always show the line; for
// a host on a pipe it is a warning when commands run unconfined on a
// machine that offers no layer, else information (quiet at the default
// level). The layers are known once the sandbox's probe has finished,
// which over stdio may be after initialize has been answered.
func (w *workspaceFlags) sandboxLine(cwd string, hf *httpFlags, logger *slog.Logger) (sayLayers func() string, instructions string) {
	perm, err := w.permissionSetup(cwd)
	if err != nil {
		return func() string { return "" }, ""
	}
	sb := perm.sandbox
	if err := sb.ProtectServer(); err != nil {
		logger.Warn("the server stays dumpable: a command could reach its descriptors through /proc", "err", err)
	}
	if sb.Unconfined() {
		instructions = sandbox.UnconfinedNotice
	}
	hf.ready = sandboxReady(w.sandbox, sb)
	return func() string {
		line := sb.Describe()
		if sb != nil && !sb.Layers().Any() {
			logger.Warn(line)
		} else {
			logger.Info(line)
		}
		return line
	}, instructions
}

// serveStdio serves on stdin/stdout. The sandbox line is said once the
// host has the answer to initialize (the host waits for that answer, and
// the sandbox's probe behind the line would take a core from it) or the
// input has ended; to a person at a terminal at once, with a greeting.
func serveStdio(ctx context.Context, srv *server.Server, initialized <-chan struct{}, sayLayers func() string, stderr io.Writer) error {
	said, served := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(said)
		person := xterm.IsTerminal(int(os.Stdin.Fd()))
		if !person {
			select {
			case <-initialized:
			case <-served:
			}
		}
		line := sayLayers()
		if person {
			fmt.Fprintln(stderr, stdioGreeting(line))
		}
	}()
	err := srv.ServeStdio(ctx)
	close(served)
	<-said // said even when the input ended at once
	return err
}

// startupGC lets the heap grow to five times its live size, instead of
// twice, before a collection while serve starts, and returns the function
// that puts the setting back (once it has run, later calls do nothing).
// The start allocates about 3.5 MB, nearly all of it garbage at once
// (package initialisation, the SDK's decoding buffers as the tools are
// added): with the default setting the first collection came in the
// middle of it, before initialize was answered, and cost about a
// millisecond of that answer on 2 cores. The Go compiler starts with a
// larger heap goal for the same reason. A GOGC already above that, or off,
// is left alone.
func startupGC() (done func()) {
	const startPercent = 400
	old := debug.SetGCPercent(startPercent)
	if old < 0 || old >= startPercent {
		debug.SetGCPercent(old)
		return func() {}
	}
	return sync.OnceFunc(func() { debug.SetGCPercent(old) })
}

// httpFlags are serve's flags for streamable HTTP (--http).
type httpFlags struct {
	enabled                      bool
	addr, token, tokenFile       string
	clientTokens                 stringList
	noAuth, allowRemote          bool
	tlsCert, tlsKey              string
	sessionTimeout               time.Duration
	allowHosts, allowOrigins     stringList
	maxSessionCalls, maxSessions int
	maxBodyBytes                 int64
	resumeWindow, shutdownGrace  time.Duration
	adminAddr                    string
	taskInline, taskTTL          time.Duration

	metrics *server.Metrics // served at /metrics, set by cmdServe
	ready   func() error    // /readyz's sandbox check, set by cmdServe
}

func (f *httpFlags) add(fs *flag.FlagSet) {
	fs.BoolVar(&f.enabled, "http", false, "serve streamable HTTP instead of stdio")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8765", "HTTP listen address; port 0 picks a free port")
	fs.StringVar(&f.token, "token", "", "bearer token HTTP clients must send (default: $AGENT_MCP_TOKEN, else a generated one, printed once);\n"+
		"every process on the machine can read a command line: prefer --token-file or the variable")
	fs.StringVar(&f.tokenFile, "token-file", "", "read the bearer token from this file")
	fs.Var(&f.clientTokens, "client-token", "NAME=TOKEN: a further bearer token for one host or client (repeatable; default: $AGENT_MCP_CLIENT_TOKENS,\n"+
		"NAME=TOKEN pairs separated by spaces or commas). Clients of protocol 2026-07-28,\n"+
		"which has no sessions over HTTP, keep their state (files read, background tasks, todo list) per token:\n"+
		"give each host its own token to keep their state apart")
	fs.BoolVar(&f.noAuth, "no-auth", false, "serve HTTP without a token (loopback addresses only)")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow binding a non-loopback address (a token is still required)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file for HTTPS")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS key file for HTTPS")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", 30*time.Minute, "close HTTP sessions idle this long (0: never)")
	fs.Var(&f.allowHosts, "allow-host", "a further Host name HTTP clients may use besides loopback ones (repeatable)")
	fs.Var(&f.allowOrigins, "allow-origin", "a further Origin browsers may send besides loopback ones, e.g. https://app.example (repeatable)")
	fs.IntVar(&f.maxSessionCalls, "max-session-calls", server.DefaultMaxSessionCalls, "tools/call requests one HTTP session may have in flight")
	fs.StringVar(&f.adminAddr, "admin-addr", "", "HTTP mode: a second listen address serving only /healthz, /readyz and /metrics\n"+
		"(metrics without a token on a loopback address; elsewhere it needs --allow-remote, and metrics the bearer token)")
	fs.IntVar(&f.maxSessions, "max-sessions", server.DefaultMaxSessions, "MCP sessions one HTTP server keeps at once; a new one over the cap closes the session idle the longest, or gets 503 when all are busy")
	fs.Int64Var(&f.maxBodyBytes, "max-body-bytes", 0, "largest HTTP request body accepted, in bytes; larger ones get 413 naming this flag\n(default: --max-input-bytes plus 1 MiB for the JSON-RPC message around the input, so any call the input cap accepts fits)")
	fs.DurationVar(&f.resumeWindow, "resume-window", server.DefaultResumeWindow, "how long a disconnected HTTP client's calls wait for it to resume (Last-Event-ID) before they are cancelled")
	fs.DurationVar(&f.shutdownGrace, "shutdown-grace", 10*time.Second, "on SIGTERM, how long in-flight HTTP calls may finish before they are cancelled")
	fs.DurationVar(&f.taskInline, "task-inline", server.DefaultTaskInline, "for clients that accept MCP tasks (protocol 2026-07-28): how long a Bash, Agent or WebFetch call runs\n"+
		"before it is answered with a task the client polls")
	fs.DurationVar(&f.taskTTL, "task-ttl", server.DefaultTaskTTL, "an MCP task's life from its creation: a task still running then is cancelled (its processes ended)")
}

// tasks are the Tasks extension's options the flags give.
func (f *httpFlags) tasks() server.TaskOptions {
	tools := server.DefaultTaskTools()
	for name, p := range tools {
		p.Inline = f.taskInline
		tools[name] = p
	}
	return server.TaskOptions{TTL: f.taskTTL, Tools: tools}
}

// options turns the flags into the HTTP server's options: the token is
// --token, else $AGENT_MCP_TOKEN, else generated (generated says so);
// the client tokens are --client-token, else $AGENT_MCP_CLIENT_TOKENS.
func (f *httpFlags) options() (opts server.HTTPOptions, generated bool, err error) {
	if f.taskInline < 0 {
		return opts, false, fmt.Errorf("--task-inline must not be negative, got %s", f.taskInline)
	}
	if f.taskTTL <= 0 {
		return opts, false, fmt.Errorf("--task-ttl must be positive, got %s", f.taskTTL)
	}
	tok := f.token
	if tok == "" {
		tok = os.Getenv("AGENT_MCP_TOKEN")
	}
	if tok == "" && !f.noAuth {
		tok, generated = tools.RandomID(), true
	}
	clientTokens := f.clientTokens
	if len(clientTokens) == 0 {
		clientTokens = strings.FieldsFunc(os.Getenv("AGENT_MCP_CLIENT_TOKENS"), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	}
	var named []server.ClientToken
	for _, ct := range clientTokens {
		name, secret, ok := strings.Cut(ct, "=")
		if !ok {
			return opts, false, errors.New("--client-token: expected NAME=TOKEN (the value given has no \"=\")")
		}
		named = append(named, server.ClientToken{Name: name, Token: secret})
	}
	if f.maxSessions < 1 {
		return opts, false, fmt.Errorf("--max-sessions must be at least 1, got %d", f.maxSessions)
	}
	return server.HTTPOptions{
		Addr: f.addr, Token: tok, ClientTokens: named, NoAuth: f.noAuth, AllowRemote: f.allowRemote,
		TLSCert: f.tlsCert, TLSKey: f.tlsKey, SessionTimeout: f.sessionTimeout,
		AllowedHosts: f.allowHosts, AllowedOrigins: f.allowOrigins, MaxSessionCalls: f.maxSessionCalls,
		MaxBodyBytes: f.maxBodyBytes, ResumeWindow: f.resumeWindow, MaxSessions: f.maxSessions,
		AdminAddr: f.adminAddr, Metrics: f.metrics, Ready: f.ready,
	}, generated, nil
}

// serve serves srv over HTTP until ctx ends, after printing where (with
// the sandbox's line, and a generated token with a client config).
func (f *httpFlags) serve(ctx context.Context, srv *server.Server, sandboxLine string, stderr io.Writer) error {
	opts, generated, err := f.options()
	if err != nil {
		return err
	}
	h, err := srv.ListenHTTP(opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "agent-mcp serving MCP at %s\n", h.URL)
	if h.AdminURL != "" {
		fmt.Fprintf(stderr, "Probes and metrics at %s (/healthz, /readyz, /metrics)\n", h.AdminURL)
	}
	if sandboxLine != "" {
		fmt.Fprintf(stderr, "Bash %s\n", sandboxLine)
	}
	if generated {
		cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"agent-mcp": map[string]any{
			"type": "http", "url": h.URL, "headers": map[string]string{"Authorization": "Bearer " + opts.Token},
		}}}, "", "  ")
		fmt.Fprintf(stderr, "Generated bearer token (shown once): %s\nClient config:\n%s\n", opts.Token, cfg)
		fmt.Fprintf(stderr, "Claude Code: claude mcp add --transport http agent-mcp %s --header \"Authorization: Bearer %s\"\n", h.URL, opts.Token)
	}
	return h.Serve(ctx, f.shutdownGrace)
}

// addDeferToolsFlag adds --defer-tools, which serve and tools share.
func addDeferToolsFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("defer-tools", false, "let hosts that load tools on demand (Claude Code's tool search) defer the core tools too:\n"+
		"without it Read, Write, Edit, MultiEdit, Glob, Grep, Bash and TaskOutput carry anthropic/alwaysLoad,\n"+
		"so the model has their schemas from its first request. For users with many MCP servers")
}

// stdioGreeting is the one line serve prints when a person, not an MCP
// host, started it on a terminal; sandbox says how Bash is confined.
func stdioGreeting(sandbox string) string {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	return greeting(exe, sandbox)
}

// greeting is stdioGreeting for the binary at exe ("" when unknown). A
// binary `go run` built lives in Go's build directories and is deleted by
// Go, so a host registered with its path would fail to start it later:
// the user is told to build or install one and register that path.
func greeting(exe, sandbox string) string {
	register := "register it with `claude mcp add agent-mcp -- " + exe + " serve` (other hosts: see the README)"
	if tmp, cache := goBuildDirs(); exe == "" || builtByGoRun(exe, tmp, cache) {
		register = "this binary was built by `go run` and Go deletes it, so build one with `go build -o agent-mcp .` " +
			"(or `go install github.com/agent-mcp/agent-mcp@latest`) and register that path: " +
			"`claude mcp add agent-mcp -- /absolute/path/to/agent-mcp serve` (other hosts: see the README)"
	}
	return "agent-mcp speaks MCP (JSON-RPC) on stdin/stdout and is meant to be started by an MCP host: " + register +
		", or try `agent-mcp serve --http` or `agent-mcp chat`; Ctrl-D quits." + sandboxSuffix(sandbox)
}

// goBuildDirs are where `go run` leaves the binaries it builds: Go's
// temporary directory ($GOTMPDIR, else the system's), where it builds the
// main module's, and its build cache ($GOCACHE, else go-build in the user
// cache directory), where it keeps those of `go run pkg@version`.
func goBuildDirs() (tmp, cache string) {
	if tmp = os.Getenv("GOTMPDIR"); tmp == "" {
		tmp = os.TempDir()
	}
	if cache = os.Getenv("GOCACHE"); cache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "go-build")
		}
	}
	return tmp, cache
}

// builtByGoRun reports whether exe is a binary `go run` built: in a
// go-build directory of tmp, or anywhere in cache (see goBuildDirs).
func builtByGoRun(exe, tmp, cache string) bool {
	exe = filepath.Clean(exe)
	if rel, err := filepath.Rel(tmp, exe); tmp != "" && err == nil && strings.HasPrefix(rel, "go-build") {
		return true
	}
	rel, err := filepath.Rel(cache, exe)
	return cache != "" && err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// sandboxSuffix appends the sandbox's description to a start-up line.
func sandboxSuffix(sandbox string) string {
	if sandbox == "" {
		return ""
	}
	return " Bash " + sandbox + "."
}

func cmdTools(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tools", "tools [--json] [flags]",
		"Lists the tools the server offers a host with these flags and settings: each tool's name, whether it\n"+
			"is read-only, and the first line of its description; --json prints tools/list's answer instead\n"+
			"(annotations and input schemas). A host that declares no MCP sampling gets no Agent; --sampling lists\n"+
			"what one that does gets.", stdout, stderr)
	var w workspaceFlags
	w.add(fs.FlagSet)
	asJSON := fs.Bool("json", false, "print the pool as JSON, as tools/list would")
	sampling := fs.Bool("sampling", false, "list what a host that declares MCP sampling gets (with Agent)")
	deferTools := addDeferToolsFlag(fs.FlagSet)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pipeline, err := buildPipeline(&w, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	// What tools/list gives the host: a tool that needs a model only to
	// one that declares sampling (server.hideUnavailableTools).
	all := server.ToolList(pipeline.Pool, *deferTools)
	list, needModel := all[:0], []string(nil)
	for _, t := range all {
		if pt, ok := pipeline.Pool.Find(t.Name); ok && pt.NeedsModel && !*sampling {
			needModel = append(needModel, t.Name)
			continue
		}
		list = append(list, t)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"tools": list})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREAD-ONLY\tDESCRIPTION")
	for _, t := range list {
		ro := "no"
		if t.Annotations != nil && t.Annotations.ReadOnlyHint {
			ro = "yes"
		}
		first, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, ro, strings.TrimSpace(first))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(needModel) > 0 {
		fmt.Fprintf(stdout, "\n%s: offered only to a host that declares MCP sampling (not Claude Code, Codex CLI or Gemini CLI); --sampling lists what such a host gets\n",
			strings.Join(needModel, ", "))
	}
	servers, err := w.lspServers(w.perm.loaded, w.perm.loadedProject)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	printLSPServers(stdout, servers, w.lsp)
	return nil
}

// shellCollectors are the metrics of Bash's commands: started inside and
// outside the sandbox, sandbox setup failures, background tasks running.
func shellCollectors(st *shell.Stats) []prometheus.Collector {
	return []prometheus.Collector{
		server.CounterFunc("sandbox_launches_confined_total", "Bash commands started inside the kernel sandbox.", func() float64 {
			c, _ := st.Started()
			return float64(c)
		}),
		server.CounterFunc("sandbox_launches_unconfined_total", "Bash commands started outside the kernel sandbox (sandbox off, no layer, or an excluded command).", func() float64 {
			_, u := st.Started()
			return float64(u)
		}),
		server.CounterFunc("sandbox_setup_failures_total", "Bash commands that never ran because their sandbox could not be set up.", func() float64 {
			return float64(st.SetupFailures())
		}),
		server.GaugeFunc("background_tasks", "Background tasks running across the server's sessions.", func() float64 {
			return float64(st.Background())
		}),
	}
}

// sandboxReady is /readyz's check of the sandbox: under --sandbox
// required, a server whose sandbox holds no layer takes no new sessions.
func sandboxReady(mode string, sb *sandbox.Sandbox) func() error {
	return func() error {
		if mode == "required" && (sb == nil || !sb.Layers().Any()) {
			return errors.New("--sandbox required, and no sandbox layer holds")
		}
		return nil
	}
}

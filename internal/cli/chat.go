package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	xterm "golang.org/x/term"

	"github.com/agent-mcp/agent-mcp/internal/providers"
	"github.com/agent-mcp/agent-mcp/internal/tui"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/agent"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/orchestrator/upstream"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// defaultModel is used when neither --model, $AGENT_MCP_MODEL nor the
// settings' "model" name one.
const defaultModel = "anthropic/claude-sonnet-4-5"

// Exit codes of chat, besides 0 (success), 1 (error) and 2 (usage).
const (
	exitMaxTurns    = 3
	exitInterrupted = 130
	exitTerminated  = 143 // SIGTERM, as a shell reports it
)

// exitError carries a specific exit code; run prints its message (if any)
// and exits with the code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

type chatFlags struct {
	w             workspaceFlags
	print         bool
	model         string
	baseURL       string
	outputFormat  string
	maxTurns      int
	maxTokens     int
	contextWindow int
	mcpConfigs    stringList
	strictMCP     bool
	mcpConnect    time.Duration
	mcpCall       time.Duration
	cont          bool
	resume        string
	pickResume    bool
	think         bool
	appendSystem  string
	fullscreen    bool
}

func cmdChat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, prompt, err := parseChatFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	if f.print {
		return runPrint(ctx, f, prompt, stdout, stderr)
	}
	return runInteractive(ctx, f, stdout, stderr)
}

// parseChatFlags parses and checks chat's arguments: the flags and, with
// -p, the prompt given as arguments (joined by spaces).
func parseChatFlags(args []string, stdout, stderr io.Writer) (*chatFlags, string, error) {
	fs := newFlagSet("chat", "chat [flags] [-p PROMPT]",
		"Runs the bundled coding agent: interactively in the terminal, or once with -p on PROMPT (or on\n"+
			"stdin) for scripts.\n\n"+
			"Models: --model anthropic/NAME (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), openai/NAME (OPENAI_API_KEY,\n"+
			"OPENAI_BASE_URL), ollama/NAME, lmstudio/NAME, vllm/NAME, llamacpp/NAME, openrouter/NAME, or\n"+
			"PROVIDER/NAME with --base-url. Upstream MCP servers come from the project's .mcp.json,\n"+
			"~/.config/agent-mcp/mcp.json and --mcp-config.\n\n"+
			"In a terminal: Enter sends, Ctrl-J/Alt-Enter or a trailing \\ adds a line, ↑/↓ history, Tab completes\n"+
			"@path, Esc/Ctrl-C cancels the turn; /help lists the commands (/model, /compact, /cost, ...). Ctrl-O\n"+
			"shows every output cut short: inline, the transcript covers the screen with all of them expanded\n"+
			"(↑/↓ PgUp/PgDn Home/End scroll, Ctrl-O or Esc goes back); with --fullscreen, where the conversation\n"+
			"scrolls above the input (PgUp/PgDn, mouse wheel), it expands and collapses them all in place. Plain\n"+
			"lines when stdout is not a terminal, TERM=dumb or NO_COLOR is set (--fullscreen then does nothing).\n\n"+
			"Exit codes: 0 done, 1 error, 2 usage, 3 max turns reached, 130 interrupted, 143 terminated.", stdout, stderr)
	var f chatFlags
	f.w.add(fs.FlagSet)
	f.w.perm.strict = true
	fs.BoolVar(&f.print, "p", false, "print mode: answer PROMPT (the arguments, and stdin when it is not a terminal) and exit")
	fs.BoolVar(&f.print, "print", false, "same as -p")
	fs.StringVar(&f.model, "model", "", "provider/model (default: $AGENT_MCP_MODEL, the settings' \"model\", else "+defaultModel+")")
	fs.StringVar(&f.baseURL, "base-url", "", "the model endpoint (default: the provider's, or $ANTHROPIC_BASE_URL / $OPENAI_BASE_URL)")
	fs.StringVar(&f.outputFormat, "output-format", "text", "with -p: text, json or stream-json")
	fs.IntVar(&f.maxTurns, "max-turns", 0, "stop after this many model calls per prompt (0: no limit)")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "output tokens per model call (default: the provider's)")
	fs.IntVar(&f.contextWindow, "context-window", 0, "the model's context size in tokens (default: a guess from the model name)")
	fs.Var(&f.mcpConfigs, "mcp-config", "an MCP server config file (mcpServers JSON; repeatable)")
	fs.BoolVar(&f.strictMCP, "strict-mcp-config", false, "use only the --mcp-config files, not .mcp.json or the user config")
	fs.DurationVar(&f.mcpConnect, "mcp-connect-timeout", upstream.DefaultConnectTimeout, "how long an upstream MCP server may take to start")
	fs.DurationVar(&f.mcpCall, "mcp-call-timeout", upstream.DefaultCallTimeout, "how long an upstream MCP tool call may take (a call the server made a task: each request about it)")
	fs.BoolVar(&f.cont, "continue", false, "continue the last conversation in this directory")
	fs.BoolVar(&f.cont, "c", false, "same as --continue")
	fs.StringVar(&f.resume, "resume", "", "resume the conversation with this id (without one: pick from this directory's)")
	fs.BoolVar(&f.think, "think", false, "thinking on: Anthropic's extended thinking, a reasoning effort for OpenAI-compatible models (/think toggles it; shown dimmed)")
	fs.StringVar(&f.appendSystem, "append-system-prompt", "", "text added to the end of the system prompt")
	fs.BoolVar(&f.fullscreen, "fullscreen", false, "in a terminal, draw the session in the alternate screen: the conversation scrolls (PgUp/PgDn, wheel) above the input (/fullscreen toggles it)")
	// --resume without an id (last, or before another flag) opens a picker.
	args = append([]string(nil), args...)
	for i, a := range args {
		if (a == "--resume" || a == "-resume") && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			args[i] = "--resume="
			f.pickResume = true
		}
	}
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, "", err
	}
	switch f.outputFormat {
	case "text", "json", "stream-json":
	default:
		return nil, "", fmt.Errorf("--output-format %q: expected text, json or stream-json", f.outputFormat)
	}
	if !f.print && len(positional) > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q (use -p to answer a prompt and exit)\n", positional[0])
		return nil, "", errUsage
	}
	if f.cont && (f.resume != "" || f.pickResume) {
		return nil, "", errors.New("--continue and --resume cannot be used together")
	}
	if f.pickResume && f.print {
		return nil, "", errors.New("--resume needs a conversation id with -p")
	}
	return &f, strings.Join(positional, " "), nil
}

// parseInterspersed parses flags that may come after positional
// arguments (chat -p "PROMPT" --max-turns 3) and returns the positionals.
func parseInterspersed(fs *cmdFlags, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// chatEnv is everything a chat needs, built from the flags.
type chatEnv struct {
	retryUnit time.Duration
	llm       llm.Model
	model     string // provider/name as given
	session   *tools.Session
	pipeline  *orchestrator.Pipeline
	mcp       *upstream.Manager
	perm      *permissionSetup
	store     *agent.Store
	conv      *agent.Conversation
	history   []llm.Message
	agentOpts agent.Options
}

func (e *chatEnv) close() {
	if e.mcp != nil {
		e.mcp.Close()
	}
	if e.session != nil {
		_ = e.session.Close()
	}
}

// setupChat builds a chat's environment from the flags. What it starts
// (the upstream MCP servers, the session) is closed again when a later
// step fails: env.close, deferred once, is the only cleanup, so a step
// added later is covered too.
func setupChat(ctx context.Context, f *chatFlags, asker tools.Asker, logger *slog.Logger, stderr io.Writer) (_ *chatEnv, err error) {
	sessOpts, err := f.w.sessionOptions()
	if err != nil {
		return nil, err
	}
	cwd := sessOpts.Cwd
	perm, err := f.w.permissionSetup(cwd)
	if err != nil {
		return nil, err
	}
	perm.warnIgnored(stderr)
	toolOpts, err := f.w.toolOptions()
	if err != nil {
		return nil, err
	}
	toolOpts.Sandbox, toolOpts.Excluded = perm.sandbox, perm.excluded
	toolOpts.EnvAllow = perm.settings.Sandbox.EnvAllow
	// The sandbox's probe runs while the chat sets up and the user types.
	perm.sandbox.StartProbe()
	if toolOpts.LSP, err = f.w.lspService(perm, cwd); err != nil {
		return nil, err
	}
	env := &chatEnv{perm: perm, model: chatModel(f.model, perm.settings.Model)}
	if env.retryUnit, err = providers.ParseRetryUnit(os.Getenv(providers.RetryUnitEnv)); err != nil {
		return nil, err
	}
	env.llm, err = providers.New(providers.Options{Model: env.model, BaseURL: f.baseURL, MaxRetries: -1, RetryUnit: env.retryUnit})
	if err != nil {
		return nil, err
	}
	trusted := perm.settings.WorkspaceTrusted
	// The chat's UI asks through its own question widget; print mode asks
	// on stderr.
	confirm, _ := asker.(confirmer)
	cfgs, warnings, err := upstream.Load(upstream.LoadOptions{ProjectDir: cwd, Files: f.mcpConfigs, Strict: f.strictMCP,
		ProjectFilter: func(servers []upstream.ServerConfig) []upstream.ServerConfig {
			return projectServers(ctx, servers, trusted, confirm, os.Stdin, stderr)
		}})
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %v\n", w)
	}

	defer func() {
		if err != nil {
			env.close()
		}
	}()
	env.mcp = upstream.Start(ctx, cfgs, upstream.Options{
		ConnectTimeout: f.mcpConnect, CallTimeout: f.mcpCall,
		ClientName: "agent-mcp", ClientVersion: version(), Logger: logger,
	})
	for _, st := range env.mcp.Status() {
		if st.State != upstream.Connected {
			fmt.Fprintf(stderr, "warning: MCP server %q is unavailable: %s\n", st.Name, st.Error)
		}
	}
	builtins := builtin.Tools(toolOpts)
	filter := perm.filter()
	assemble := func() (*orchestrator.Pool, error) {
		return orchestrator.AssemblePool(builtins, env.mcp.Tools(), filter)
	}
	pool, err := assemble()
	if err != nil {
		return nil, err
	}
	env.pipeline = &orchestrator.Pipeline{Pool: pool, MaxParallel: f.w.maxParallel, MaxInputBytes: f.w.maxInput, Logger: logger}
	perm.wire(env.pipeline)
	if env.session, err = tools.NewSession(sessOpts); err != nil {
		return nil, err
	}
	if err = env.openConversation(f, cwd, stderr); err != nil {
		return nil, err
	}
	env.agentOpts = env.agentOptions(f, pool, asker, logger, cwd, func() *orchestrator.Pool {
		if !env.mcp.Changed() {
			return nil
		}
		p, err := assemble()
		if err != nil {
			logger.Warn("rebuilding the tool pool", "err", err)
			return nil
		}
		return p
	})
	return env, nil
}

// chatModel is the model a chat starts with: --model, else
// $AGENT_MCP_MODEL, else the settings' "model", else defaultModel.
func chatModel(flag, settings string) string {
	for _, m := range []string{flag, os.Getenv("AGENT_MCP_MODEL"), settings} {
		if m != "" {
			return m
		}
	}
	return defaultModel
}

// openConversation opens the conversation store and the conversation the
// flags name (--continue: the directory's latest; --resume ID), or
// creates one. A store that cannot be opened, or a conversation that
// cannot be created, is a warning (the chat goes on unsaved); one that
// cannot be resumed is an error.
func (e *chatEnv) openConversation(f *chatFlags, cwd string, stderr io.Writer) error {
	stateDir, err := agent.DefaultStateDir()
	if err == nil {
		e.store, err = agent.OpenStore(stateDir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: conversations will not be saved: %v\n", err)
		if f.cont || f.resume != "" {
			return errors.New("no conversation store to resume from")
		}
		return nil
	}
	id := f.resume
	if f.cont {
		if id, err = e.store.Latest(cwd); err != nil {
			return fmt.Errorf("--continue: %w", err)
		}
	}
	if id != "" {
		e.conv, e.history, err = e.store.Open(id)
		return err
	}
	if e.conv, err = e.store.Create(cwd, e.model); err != nil {
		fmt.Fprintf(stderr, "warning: conversations will not be saved: %v\n", err)
	}
	return nil
}

// agentOptions are the agent loop's options for the chat: its model
// and pipeline, the tools' context (session, asker, sub-agents, the
// sampler), the system prompt for pool and the working directory, the
// flags' limits, the conversation to save to, and refresh, which gives a
// new pool when the upstream servers' tools changed.
func (e *chatEnv) agentOptions(f *chatFlags, pool *orchestrator.Pool, asker tools.Asker, logger *slog.Logger, cwd string, refresh func() *orchestrator.Pool) agent.Options {
	contextWindow := f.contextWindow
	if contextWindow <= 0 {
		prov, name, _ := providers.SplitModel(e.model) // New accepted it
		contextWindow = providers.ContextWindow(prov, name)
	}
	thinking := 0
	if f.think {
		thinking = tui.DefaultThinkingBudget
	}
	runner := &agent.SubAgents{Pipeline: e.pipeline, Model: e.llm, MaxTokens: f.maxTokens, ContextWindow: contextWindow}
	return agent.Options{
		Model: e.llm, Pipeline: e.pipeline,
		UseContext: tools.UseContext{
			Session: e.session, Asker: asker, LaterAsker: asker, Logger: logger, SubAgents: runner,
			Sampler: &agent.Sampler{Model: e.llm},
		},
		System:         agent.SystemPrompt(pool, agent.DetectEnv(cwd, time.Now()), f.appendSystem),
		MaxTurns:       f.maxTurns,
		MaxTokens:      f.maxTokens,
		ThinkingBudget: thinking,
		ContextWindow:  contextWindow,
		Store:          e.conv,
		Logger:         logger,
		Refresh:        refresh,
	}
}

func chatLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}

// runPrint answers one prompt and exits.
func runPrint(ctx context.Context, f *chatFlags, prompt string, stdout, stderr io.Writer) error {
	if st, err := os.Stdin.Stat(); err == nil && st.Mode()&os.ModeCharDevice == 0 {
		in, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		if s := strings.TrimSpace(string(in)); s != "" {
			if prompt != "" {
				prompt += "\n\n"
			}
			prompt += s
		}
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "agent-mcp chat -p: no prompt: give it as an argument or on stdin")
		return errUsage
	}
	logger := chatLogger(stderr)
	asker := newPrintAsker(stderr)
	env, err := setupChat(ctx, f, asker, logger, stderr)
	if err != nil {
		return err
	}
	defer env.close()
	sessionID := env.session.ID()
	if env.conv != nil {
		sessionID = env.conv.ID
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	cfg := env.agentOpts
	if f.outputFormat == "stream-json" {
		tools := []string{}
		for _, t := range env.pipeline.Pool.Tools() {
			tools = append(tools, t.Name)
		}
		_ = enc.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": sessionID, "model": env.model,
			"cwd": env.session.Cwd(), "tools": tools, "mcp_servers": env.mcp.Status(), "permission_mode": env.session.Mode()})
		cfg.Events.Message = func(m llm.Message) {
			if m.Role == llm.User && len(m.Content) > 0 && m.Content[0].Type != llm.ToolResultBlock {
				return // the prompt itself is not echoed
			}
			_ = enc.Encode(map[string]any{"type": string(m.Role), "message": m, "session_id": sessionID})
		}
	}
	cfg.Events.ToolEnd = chainToolEnd(cfg.Events.ToolEnd, asker.toolEnd)
	cfg.Events.Retry = chainRetry(cfg.Events.Retry, func(r llm.RetryInfo) { printRetry(stderr, r) })
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	a.SetMessages(env.history)
	start := time.Now()
	res, runErr := a.Run(ctx, prompt)
	if res == nil {
		res = &agent.Result{}
	}
	subtype, code := "success", 0
	switch {
	case runErr == nil:
	case errors.Is(runErr, agent.ErrMaxTurns):
		subtype, code = "error_max_turns", exitMaxTurns
	case ctx.Err() != nil:
		subtype, code = "error_interrupted", exitInterrupted
	default:
		subtype, code = "error_during_execution", 1
	}
	switch f.outputFormat {
	case "text":
		if runErr == nil {
			fmt.Fprintln(stdout, strings.TrimRight(res.Text, "\n"))
		}
	default:
		out := map[string]any{
			"type": "result", "subtype": subtype, "is_error": runErr != nil, "result": res.Text,
			"session_id": sessionID, "num_turns": res.Turns, "duration_ms": time.Since(start).Milliseconds(),
			"usage": res.Usage, "model": env.model, "permission_denials": asker.refusals(),
		}
		if cost, ok := tui.EstimateCost(env.model, res.Usage); ok {
			out["total_cost_usd"] = cost
		}
		if runErr != nil {
			out["error"] = runErr.Error()
		}
		_ = enc.Encode(out)
	}
	if runErr != nil {
		return &exitError{code: code, err: runErr}
	}
	return nil
}

// printRetry says on stderr, in one line, that a model call failed and
// is made again: print mode's stdout is the answer alone.
func printRetry(stderr io.Writer, r llm.RetryInfo) {
	what := "the model call failed"
	if r.Discarded {
		what = "the reply was cut off"
	}
	cause, _, _ := strings.Cut(r.Err.Error(), "\n")
	fmt.Fprintf(stderr, "agent-mcp: %s (%s); r%s\n", what, cause, strings.TrimPrefix(r.String(), "R"))
}

// chainRetry calls first (when set), then then.
func chainRetry(first, then func(llm.RetryInfo)) func(llm.RetryInfo) {
	if first == nil {
		return then
	}
	return func(r llm.RetryInfo) {
		first(r)
		then(r)
	}
}

// chainToolEnd calls first (when set), then then.
func chainToolEnd(first, then func(orchestrator.Outcome)) func(orchestrator.Outcome) {
	if first == nil {
		return then
	}
	return func(o orchestrator.Outcome) {
		first(o)
		then(o)
	}
}

// newChatUI is the full terminal UI when stdin and stdout are a terminal
// that takes colours (TERM is not dumb, NO_COLOR is unset), else plain
// lines.
func newChatUI(stdout io.Writer, f *chatFlags) *tui.UI {
	out, ok := stdout.(*os.File)
	if !ok || !xterm.IsTerminal(int(os.Stdin.Fd())) || !xterm.IsTerminal(int(out.Fd())) ||
		os.Getenv("TERM") == "dumb" || os.Getenv("NO_COLOR") != "" {
		return tui.New(os.Stdin, stdout)
	}
	cwd := f.w.cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	opts := tui.FullOptions{Cwd: func() string { return cwd }, FullScreen: f.fullscreen}
	if dir, err := agent.DefaultStateDir(); err == nil {
		opts.HistoryFile = tui.HistoryPath(dir, cwd)
	}
	return tui.NewFull(os.Stdin, out, opts)
}

// runInteractive runs the terminal chat.
func runInteractive(ctx context.Context, f *chatFlags, stdout, stderr io.Writer) error {
	// Ctrl-C cancels a turn, not the program: handle SIGINT here and keep
	// only SIGTERM, SIGHUP (the terminal closing) and a second Ctrl-C as a
	// way out.
	base := context.WithoutCancel(ctx)
	base, stop := context.WithCancel(base)
	defer stop()
	interrupts := make(chan os.Signal, 4)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(terms)
	go func() {
		select {
		case <-terms:
			stop()
		case <-base.Done():
		}
	}()
	// Settings are read and the sandbox set up before
	// the terminal UI starts drawing, so the banner comes first.
	if _, err := f.w.sessionOptions(); err != nil {
		return err
	}
	ui := newChatUI(stdout, f)
	defer ui.Close()
	if ui.Full() {
		// The terminal UI owns the screen: warnings are printed through it.
		stderr = ui.Writer()
	}
	logger := chatLogger(stderr)
	env, err := setupChat(base, f, ui, logger, stderr)
	if err != nil {
		return err
	}
	defer env.close()
	cfg := env.agentOpts
	cfg.Events = ui.Events()
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	a.SetMessages(env.history)
	repl := &tui.REPL{
		UI: ui, Agent: a, Session: env.session, Model: env.model, Servers: env.mcp.Status, Interrupts: interrupts,
		Store: env.store, PickResume: f.pickResume,
		NewModel: func(spec string) (llm.Model, error) {
			// --base-url belongs to the provider it was given with: kept
			// while the provider stays, while another provider gets its
			// own endpoint and key (its environment variables, else its
			// default), so a key never goes to another provider's endpoint.
			base := f.baseURL
			p0, _, _ := providers.SplitModel(env.model)
			if p1, _, err := providers.SplitModel(spec); err != nil || p1 != p0 {
				base = ""
			}
			return providers.New(providers.Options{Model: spec, BaseURL: base, MaxRetries: -1, RetryUnit: env.retryUnit})
		},
		Permissions: func() string { return env.perm.describe(env.session.Mode()) },
	}
	if env.store != nil {
		cwd := env.session.Cwd()
		repl.NewConversation = func() (*agent.Conversation, error) { return env.store.Create(cwd, env.model) }
	}
	if !ui.TTY() && !xterm.IsTerminal(int(os.Stdin.Fd())) {
		logger.Debug("stdin is not a terminal: reading lines plainly")
	}
	err = repl.Run(base)
	if errors.Is(err, tui.ErrInterrupted) {
		return &exitError{code: exitInterrupted}
	}
	if err != nil && base.Err() != nil {
		return &exitError{code: exitTerminated} // SIGTERM: the turn and the prompt ended
	}
	return err
}

// confirmer asks a yes-or-no question (tui.UI.Confirm).
type confirmer interface {
	Confirm(ctx context.Context, message, yes, no string) (bool, error)
}

// projectServers decides whether the project's .mcp.json servers start:
// a cloned repository's file (or one a command planted) is not the
// operator's, so they start only in a trusted workspace (agent-mcp trust,
// --trust-project) or after a yes at the terminal that names what each
// would run; without a terminal they are left out, with a warning. With
// a confirmer (the chat's UI) the question is its own widget, asked
// before any prompt is read, so a key typed at what looks like the
// prompt never answers it; without one it is one line read from stdin.
func projectServers(ctx context.Context, servers []upstream.ServerConfig, trusted bool, confirm confirmer, stdin *os.File, stderr io.Writer) []upstream.ServerConfig {
	if trusted {
		return servers
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if !xterm.IsTerminal(int(stdin.Fd())) {
		fmt.Fprintf(stderr, "warning: not starting the MCP servers of this project's .mcp.json (%s): the project is not trusted; trust it with `agent-mcp trust`, or pass --trust-project for this run\n",
			strings.Join(names, ", "))
		return nil
	}
	var q strings.Builder
	q.WriteString("This project's .mcp.json (the project is not trusted) would start:\n")
	for _, s := range servers {
		what := s.URL
		if s.Command != "" {
			what = strings.Join(append([]string{s.Command}, s.Args...), " ")
		}
		fmt.Fprintf(&q, "  %s: %s\n", s.Name, what)
	}
	if confirm != nil {
		q.WriteString("Start them? They run outside the sandbox. (`agent-mcp trust` stops this question.)")
		if yes, err := confirm.Confirm(ctx, q.String(), "Yes, start them", "No"); err == nil && yes {
			return servers
		}
		fmt.Fprintln(stderr, "Not started.")
		return nil
	}
	fmt.Fprint(stderr, q.String())
	fmt.Fprint(stderr, "Start them? [y/N] ")
	// One read: a terminal in canonical mode returns one line, and
	// nothing after it is taken from the chat's input.
	buf := make([]byte, 256)
	n, _ := stdin.Read(buf)
	answer := strings.ToLower(strings.TrimSpace(string(buf[:n])))
	if answer == "y" || answer == "yes" {
		return servers
	}
	fmt.Fprintln(stderr, "Not started.")
	return nil
}

// describe says, for /permissions, what is asked about in mode and what
// runs without a question: the settings read, the mode, what Bash's
// sandbox waives (autoAllowBashIfSandboxed, where the kernel also holds
// protected paths), and the rules.
func (p *permissionSetup) describe(mode permissions.Mode) string {
	s := p.settings
	var b strings.Builder
	if len(s.Sources) > 0 {
		fmt.Fprintf(&b, "Settings read: %s\n", strings.Join(s.Sources, ", "))
	} else {
		b.WriteString("No settings files.\n")
	}
	fmt.Fprintf(&b, "Mode at start: %s (%s); now: %s\n", p.policy.Mode, p.policy.Why, mode)
	switch mode {
	case permissions.ModeBypassPermissions:
		b.WriteString("Without a question: every call that no rule denies or asks about.\n")
	case permissions.ModePlan:
		b.WriteString("Without a question: read-only calls inside the working directories; everything else is refused (plan mode).\n")
	default:
		verb := "asked about"
		if mode == permissions.ModeDontAsk {
			verb = "refused (dontAsk mode)"
		}
		inside := "reads inside the working directories"
		if mode == permissions.ModeAcceptEdits {
			inside += ", and edits and writes there"
		}
		fmt.Fprintf(&b, "Without a question: %s, and what an allow rule names.\n", inside)
		auto := s.Sandbox.AutoAllow == nil || *s.Sandbox.AutoAllow
		switch {
		case p.sandbox == nil:
			fmt.Fprintf(&b, "Bash: no sandbox; a command that is not read-only is %s.\n", verb)
		case !auto:
			fmt.Fprintf(&b, "Bash: sandboxed, but autoAllowBashIfSandboxed is off; a command that is not read-only is %s.\n", verb)
		case !p.sandbox.HoldsPaths():
			fmt.Fprintf(&b, "Bash: sandboxed by Landlock alone, which does not hold protected paths; a command that is not read-only is %s.\n", verb)
		default:
			b.WriteString("Bash: runs in the sandbox without a question (autoAllowBashIfSandboxed): its commands, and its writes inside the working directories, are held by the kernel. ")
			fmt.Fprintf(&b, "Still %s: a command configured to run outside the sandbox, reads outside the working directories, and writes it cannot place.\n", verb)
		}
		fmt.Fprintf(&b, "Otherwise %s: edits and writes%s, web fetches, other calls that are not read-only, and calls outside the working directories (writes to protected paths such as .git/ always).\n",
			verb, map[bool]string{true: " outside the working directories", false: ""}[mode == permissions.ModeAcceptEdits])
	}
	for _, msg := range s.Ignored {
		fmt.Fprintf(&b, "Ignored: %s\n", msg)
	}
	fmt.Fprintf(&b, "Rules: %d (allow, ask and deny lists merged from every source)", s.Rules.Len())
	return b.String()
}

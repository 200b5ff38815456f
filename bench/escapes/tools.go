//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
	"github.com/agent-mcp/agent-mcp/permissions"
)

// commandLimit bounds one command in a peer's sandbox (a flood case that
// a sandbox lets run ends there).
const commandLimit = 60 * time.Second

// tool is one sandbox under test.
type tool interface {
	// name is the scoreboard's column.
	name() string
	// version is what the tool says of itself.
	version() string
	// applicable says whether the case can run in this tool, and if not
	// why not.
	applicable(c *attackcorpus.Case) (bool, string)
	// open prepares the tool for one case in one world.
	open(w *world, c *attackcorpus.Case) (session, error)
	// config is the configuration the tool runs with, in words and as
	// written, for docs/security.md.
	config() string
}

// session runs one case's commands in a tool.
type session interface {
	// run runs a command line in the sandbox (in the background where the
	// tool has a notion of it) and returns what it printed.
	run(command string, background bool) (string, error)
	// taskOutput waits for the last background command's output.
	taskOutput() (string, error)
	// taskInput types text into the last background task (waiting for
	// until in what follows, when given).
	taskInput(text, until string) (string, error)
	close()
}

// env is the environment every tool's commands start from: the world's
// home and nothing of the caller's configuration.
func (w *world) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "AGENT_MCP_") &&
			!strings.HasPrefix(kv, "CLAUDE") && !strings.HasPrefix(kv, "CODEX_") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+w.Home, "XDG_CONFIG_HOME="+filepath.Join(w.Home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(w.Home, ".cache"), "AGENT_MCP_CONFIG_DIR="+filepath.Join(w.Home, ".config", "agent-mcp"))
}

// envName is a variable's name and its equals sign, as env prints it.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=$`)

// credentials are agent-mcp's credential places for the world: under its
// home, and where the variables the sandbox starts with move them, as
// agent-mcp's server lists them.
func (w *world) credentials(c *attackcorpus.Case) []string {
	env := append(w.env(), caseEnv(w, c)...)
	getenv := func(name string) string {
		v := ""
		for _, kv := range env {
			if k, val, _ := strings.Cut(kv, "="); k == name {
				v = val
			}
		}
		return v
	}
	return permissions.Credentials{Home: w.Home, Getenv: getenv}.Paths()
}

// caseEnv is a case's env: variables, for the environment the sandbox
// (agent-mcp's server, a peer's command line) is started with.
func caseEnv(w *world, c *attackcorpus.Case) []string {
	var env []string
	for _, kv := range c.Env {
		env = append(env, w.Expand(kv))
	}
	return env
}

// peerApplicable says whether a case is "set up a world, run command
// lines, judge the facts": what a sandbox that is not a server can be
// asked. Cases that need agent-mcp's server (background tasks and their
// output, its state directory, its settings, a terminal or descriptor the
// server holds) are not.
func peerApplicable(c *attackcorpus.Case) (bool, string) {
	for _, s := range c.Steps {
		if s.Kind == "bash background" || s.Kind == "taskoutput" || s.Kind == "taskinput" {
			return false, "background tasks (the server's)"
		}
	}
	switch {
	case c.TTY:
		return false, "the server's terminal"
	case c.Inherit:
		return false, "a descriptor the server inherits"
	}
	if _, err := peerSettings(c, &world{}); err != nil {
		return false, err.Error()
	}
	var text string
	for _, s := range c.Steps {
		text += s.Text
	}
	for _, p := range c.Plant {
		text += p[0] + p[1]
	}
	if strings.Contains(text+strings.Join(c.Expect, "\n"), "@STATE@") {
		return false, "the server's state directory"
	}
	// An output check for text no step names judges what agent-mcp's
	// server says (its refusal summary, its exit status), except a
	// variable's NAME=, which the command's own env prints.
	for _, x := range c.Expect {
		want, ok := strings.CutPrefix(x, "output ")
		if ok && !strings.Contains(text, want) && !envName.MatchString(want) {
			return false, "judged by what agent-mcp's server prints"
		}
	}
	return true, ""
}

// peerConfig is what of a case's flags and settings a peer can be given:
// directories writable besides the working directory (`--add-dir`,
// additionalDirectories) and paths denied to reads (Read deny rules).
type peerConfig struct {
	roots, readDeny []string
	// allowedDomains is sandbox.network.allowedDomains.
	allowedDomains []string
}

// peerSettings maps a case's flags and settings onto a peer's; an error
// names what has no equivalent there.
func peerSettings(c *attackcorpus.Case, w *world) (peerConfig, error) {
	var pc peerConfig
	for i := 0; i < len(c.Args); i++ {
		if c.Args[i] != "--add-dir" || i+1 == len(c.Args) {
			return pc, fmt.Errorf("agent-mcp's %s flag", c.Args[i])
		}
		pc.roots = append(pc.roots, w.Expand(c.Args[i+1]))
		i++
	}
	if c.Settings == "" {
		return pc, nil
	}
	var s struct {
		Permissions struct {
			AdditionalDirectories []string `json:"additionalDirectories"`
			Deny                  []string `json:"deny"`
		} `json:"permissions"`
		Sandbox map[string]any `json:"sandbox"`
	}
	dec := json.NewDecoder(strings.NewReader(w.Expand(c.Settings)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return pc, fmt.Errorf("agent-mcp settings")
	}
	for k, v := range s.Sandbox {
		if k != "network" {
			return pc, fmt.Errorf("agent-mcp's sandbox.%s setting", k)
		}
		if v == false {
			continue
		}
		n, ok := v.(map[string]any)
		if !ok || len(n) != 1 || n["allowedDomains"] == nil {
			return pc, fmt.Errorf("agent-mcp's sandbox.network setting")
		}
		for _, d := range n["allowedDomains"].([]any) {
			pc.allowedDomains = append(pc.allowedDomains, fmt.Sprint(d))
		}
	}
	pc.roots = append(pc.roots, s.Permissions.AdditionalDirectories...)
	for _, d := range s.Permissions.Deny {
		p, ok := strings.CutPrefix(d, "Read(./")
		if !ok || !strings.HasSuffix(p, ")") {
			return pc, fmt.Errorf("the permission rule %s", d)
		}
		p = strings.TrimSuffix(strings.TrimSuffix(p, ")"), "/**")
		pc.readDeny = append(pc.readDeny, filepath.Join(w.Work, p))
	}
	return pc, nil
}

// --- agent-mcp -----------------------------------------------------------

// allowEverythingHook allows every Bash call, so that nothing but the
// sandbox stands between a command and what it attempts (as in the corpus
// run).
const allowEverythingHook = `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command",` +
	`"command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'"}]}]}}`

// agentMCP is agent-mcp's Bash tool, through the real binary over MCP.
type agentMCP struct {
	bin string
	// source is the commit the binary was built from, where known.
	source string
}

func (a agentMCP) name() string { return "agent-mcp" }

func (a agentMCP) version() string {
	out, _ := exec.Command(a.bin, "--version").CombinedOutput()
	v := strings.TrimSpace(string(out))
	if a.source != "" {
		v += ", built from " + a.source
	}
	return v
}

// sourceCommit names the checkout's commit, with "+changes" when the
// tree differs from it; "" where git cannot say.
func sourceCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := "commit " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+changes"
	}
	return c
}

func (a agentMCP) applicable(*attackcorpus.Case) (bool, string) { return true, "" }

func (a agentMCP) config() string {
	return "`agent-mcp serve --cwd WORK --state-dir STATE --permission-mode bypassPermissions` with a PreToolUse hook " +
		"that allows every call, both sandbox layers (namespaces and Landlock), the network off, its defaults otherwise " +
		"(the case's own `settings:` and `args:` added, as in the corpus run). Each command is a Bash tool call through " +
		"an MCP client: the server's own care (protected names swept after a command, the repository scan) is part of " +
		"what agent-mcp's sandbox is, so the sandbox package alone would understate it."
}

func (a agentMCP) open(w *world, c *attackcorpus.Case) (session, error) {
	argv := []string{"serve", "--cwd", w.Work, "--state-dir", w.State, "--permission-mode", "bypassPermissions", "--settings", allowEverythingHook}
	if c.Settings != "" {
		argv = append(argv, "--settings", w.Expand(c.Settings))
	}
	for _, x := range c.Args {
		argv = append(argv, w.Expand(x))
	}
	cmd := exec.Command(a.bin, argv...)
	cmd.Env = append(append(w.env(), caseEnv(w, c)...), "AGENT_MCP_SANDBOX_LAYERS=namespaces,landlock")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: w.cred}
	s := &mcpSession{}
	if c.TTY {
		ptmx, tty, err := pty.Open()
		if err != nil {
			return nil, fmt.Errorf("opening a terminal for the server: %w", err)
		}
		s.closers = append(s.closers, func() { ptmx.Close(); tty.Close() })
		w.TTY = tty.Name()
		cmd.ExtraFiles = append(cmd.ExtraFiles, tty)
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 3
	}
	if c.Inherit {
		d, err := os.Open(w.Outside)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { d.Close() })
		for len(cmd.ExtraFiles) < 40 {
			cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, d)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "escapes", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		s.close()
		return nil, err
	}
	s.cs = cs
	return s, nil
}

type mcpSession struct {
	cs       *mcp.ClientSession
	lastTask string
	closers  []func()
}

func (s *mcpSession) call(name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*commandLimit)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), nil
}

func (s *mcpSession) run(command string, background bool) (string, error) {
	args := map[string]any{"command": command}
	if background {
		args["run_in_background"] = true
	}
	out, err := s.call("Bash", args)
	if rest, ok := strings.CutPrefix(out, "Command running in the background as task "); ok {
		s.lastTask = strings.TrimSuffix(strings.Fields(rest)[0], ".")
	}
	return out, err
}

func (s *mcpSession) taskOutput() (string, error) {
	return s.call("TaskOutput", map[string]any{"task_id": s.lastTask, "block": true, "timeout": 30000})
}

func (s *mcpSession) taskInput(text, until string) (string, error) {
	if s.lastTask == "" {
		return "(no background task to type into)", nil
	}
	args := map[string]any{"task_id": s.lastTask, "input": text, "timeout": 5000}
	if until != "" {
		args["wait_for"], args["timeout"] = until, 20000
	}
	return s.call("TaskInput", args)
}

func (s *mcpSession) close() {
	if s.cs != nil {
		s.cs.Close()
	}
	for _, f := range s.closers {
		f()
	}
}

// --- peers: one process a command --------------------------------------

// execSession runs each command as a new process of a peer's command line.
type execSession struct {
	argv func(command string) []string
	dir  string
	env  []string
	// cred is the user the command runs as (nil: this process's).
	cred *syscall.Credential
	// retryOn is output that says the peer refused to start the command
	// for a passing reason; the command is started again, at most twice.
	retryOn string
}

func (s *execSession) run(command string, background bool) (string, error) {
	if background {
		return "", errors.New("no background commands")
	}
	for try := 0; ; try++ {
		out, err := runLimited(s.argv(command), s.dir, s.env, s.cred)
		if s.retryOn == "" || !strings.Contains(out, s.retryOn) || try == 2 {
			return out, err
		}
	}
}

func (s *execSession) taskOutput() (string, error) { return "", errors.New("no background commands") }
func (s *execSession) taskInput(string, string) (string, error) {
	return "", errors.New("no background commands")
}
func (s *execSession) close() {}

// runLimited runs argv in its own process group, ended with whatever it
// left at commandLimit, as cred's user (nil: this process's), and returns
// its output.
func runLimited(argv []string, dir string, env []string, cred *syscall.Credential) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("ran past %s", commandLimit)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil // the command's own failure is part of what it printed
	}
	return string(out), err
}

// --- Anthropic's sandbox runtime ----------------------------------------

// srt is Anthropic's sandbox runtime's command line.
type srt struct{ bin string }

func (s srt) name() string { return "sandbox-runtime" }

func (s srt) version() string {
	out, _ := exec.Command(s.bin, "--version").CombinedOutput()
	return "@anthropic-ai/sandbox-runtime " + strings.TrimSpace(string(out))
}

func (s srt) applicable(c *attackcorpus.Case) (bool, string) { return peerApplicable(c) }

// srtSettings is the settings file for a world: the working directory
// (and a case's --add-dir directories) writable; agent-mcp's protected
// names there and in the home denied to writes; the credential places
// agent-mcp masks denied to reads; the network through its proxy with an
// allow-list of one name, so nothing the corpus reaches is allowed.
func srtSettings(w *world, c *attackcorpus.Case) ([]byte, error) {
	cfg, err := srtConfig(w, c)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(cfg, "", "  ")
}

func srtConfig(w *world, c *attackcorpus.Case) (map[string]any, error) {
	pc, err := peerSettings(c, w)
	if err != nil {
		return nil, err
	}
	roots := append([]string{w.Work}, pc.roots...)
	cfg := map[string]any{
		"network": map[string]any{"allowedDomains": append([]string{"example.com"}, pc.allowedDomains...), "deniedDomains": []string{}},
		"filesystem": map[string]any{
			"allowWrite": roots,
			"denyWrite":  permissions.ProtectedPaths(roots, w.Home),
			"denyRead":   append(w.credentials(c), pc.readDeny...),
		},
	}
	return cfg, nil
}

func (s srt) config() string {
	return "`srt --settings FILE -c CMD` in the working directory, FILE (for a world whose working directory is /WORK and " +
		"home /HOME, its long lists shortened here):\n\n```json\n" + srtShown() + "\n```\n\n`allowWrite` adds a case's `--add-dir` directories and additionalDirectories, `denyRead` its Read deny rules' paths, `allowedDomains` its sandbox.network.allowedDomains; `denyWrite` is agent-mcp's list of protected names " +
		"(under each writable root and the home), `denyRead` agent-mcp's list of credential places, so the same places are " +
		"denied; its own mandatory denials apply on top. srt looks for its dependencies with a one-second limit before each " +
		"command and, on a loaded machine, may refuse to start (`Sandbox dependencies not available`): such a command is " +
		"started again, at most twice."
}

func (s srt) open(w *world, c *attackcorpus.Case) (session, error) {
	b, err := srtSettings(w, c)
	if err != nil {
		return nil, err
	}
	settings := filepath.Join(w.root, "srt-settings.json")
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		return nil, err
	}
	// srt looks for ripgrep with `which` and a one-second limit before
	// each command: on a loaded machine that runs out and srt refuses to
	// start ("Sandbox dependencies not available"), the command unrun.
	return &execSession{argv: func(cmd string) []string { return []string{s.bin, "--settings", settings, "-c", cmd} },
		dir: w.Work, env: append(w.env(), caseEnv(w, c)...), cred: w.cred, retryOn: "Sandbox dependencies not available"}, nil
}

// --- Codex --------------------------------------------------------------

// codex is Codex's sandbox command.
type codex struct{ bin string }

func (x codex) name() string { return "codex" }

func (x codex) version() string {
	out, _ := exec.Command(x.bin, "--version").CombinedOutput()
	return "@openai/codex " + strings.TrimSpace(string(out))
}

func (x codex) applicable(c *attackcorpus.Case) (bool, string) {
	if ok, why := peerApplicable(c); !ok {
		return ok, why
	}
	if pc, _ := peerSettings(c, &world{}); len(pc.allowedDomains) > 0 {
		return false, "a domain allow-list (its network proxy is not part of the sandbox command)"
	}
	return true, ""
}

// codexConfig is the config.toml of a world's CODEX_HOME: a permission
// profile "bench" that extends the built-in workspace profile (the
// working directory writable with its .git and .codex read-only, /tmp
// writable, the network off) with a case's further writable roots,
// agent-mcp's protected names under every writable root and the home
// read-only, and agent-mcp's credential places (and a case's Read deny
// rules' paths) unreadable where they exist. Protected names whose parent directory does
// not exist when the case starts (~/.config/git with no ~/.config) are
// left out: with them Codex's bubblewrap fails to start.
func codexConfig(w *world, c *attackcorpus.Case) (string, error) {
	pc, err := peerSettings(c, w)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("default_permissions = \"bench\"\n\n[permissions.bench]\nextends = \":workspace\"\n\n[permissions.bench.filesystem]\n")
	seen := map[string]bool{}
	entry := func(p, access string) {
		if !seen[p] {
			seen[p] = true
			fmt.Fprintf(&b, "%q = %q\n", p, access)
		}
	}
	for _, r := range pc.roots {
		entry(r, "write")
	}
	for _, p := range append(w.credentials(c), pc.readDeny...) {
		// Only what exists: Codex's bubblewrap fails to start over a
		// missing one inside a writable root ("Can't create file at
		// ~/.aws: Is a directory"), and a missing one holds nothing to
		// read.
		if _, err := os.Lstat(p); err == nil || w.root == "" {
			entry(p, "none")
		}
	}
	for _, p := range permissions.ProtectedPaths(append([]string{w.Work}, pc.roots...), w.Home) {
		// Codex's bubblewrap cannot start with an entry whose parent
		// is missing (it fails to bind over it): those are left out.
		if _, err := os.Stat(filepath.Dir(p)); err == nil || w.root == "" {
			entry(p, "read")
		}
	}
	return b.String(), nil
}

func (x codex) config() string {
	return "`codex sandbox -P bench -C WORK -- bash -c CMD` with CODEX_HOME a directory of the world's (outside /tmp, where " +
		"Codex refuses to place its helper) whose config.toml is, for a world whose working directory is /WORK and home " +
		"/HOME (its long runs of entries shortened here):\n\n```toml\n" + shorten(must(codexConfig(docWorld, &attackcorpus.Case{}))) +
		"```\n\n" +
		"A case's `--add-dir` directories and additionalDirectories are added as `write`, its Read deny rules' paths as " +
		"`none`: the same places as agent-mcp's and the sandbox runtime's, except credential places that do not exist when " +
		"the case starts (with one inside a writable root Codex's bubblewrap fails to start: `Can't create file at " +
		"HOME/.aws: Is a directory`; and they hold nothing to read) and protected names whose parent directory " +
		"does not exist when the case starts (with them Codex's bubblewrap fails to start: `Can't bind mount … No such file " +
		"or directory`). The built-in workspace profile leaves /tmp " +
		"writable, so the worlds are made outside /tmp."
}

func (x codex) open(w *world, c *attackcorpus.Case) (session, error) {
	cfg, err := codexConfig(w, c)
	if err != nil {
		return nil, err
	}
	home := filepath.Join(w.root, "codex-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	env := append(append(w.env(), caseEnv(w, c)...), "CODEX_HOME="+home)
	return &execSession{argv: func(cmd string) []string {
		return []string{x.bin, "sandbox", "-P", "bench", "-C", w.Work, "--", "bash", "-c", cmd}
	}, dir: w.Work, env: env, cred: w.cred}, nil
}

// docWorld is the world the configurations are shown for.
var docWorld = &world{Places: attackcorpus.Places{Work: "/WORK", Home: "/HOME"}}

// srtShown is the sandbox runtime's settings for docWorld, each list of
// more than four paths shortened to its first three and a count.
func srtShown() string {
	cfg := must(srtConfig(docWorld, &attackcorpus.Case{}))
	fs := cfg["filesystem"].(map[string]any)
	for k, v := range fs {
		if l := v.([]string); len(l) > 4 {
			fs[k] = append(slices.Clone(l[:3]), fmt.Sprintf("… and %d more of agent-mcp's list", len(l)-3))
		}
	}
	return string(must(json.MarshalIndent(cfg, "", "  ")))
}

// shorten keeps the first three of each run of more than four lines
// that end alike (` = "none"`), and says how many more there are.
func shorten(toml string) string {
	lines := strings.Split(strings.TrimSuffix(toml, "\n"), "\n")
	var out []string
	tail := func(l string) string {
		if i := strings.LastIndex(l, " = "); i >= 0 && strings.HasPrefix(l, "\"") {
			return l[i:]
		}
		return l
	}
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && tail(lines[j]) == tail(lines[i]) && tail(lines[i]) != lines[i] {
			j++
		}
		if j-i > 4 {
			out = append(out, lines[i:i+3]...)
			out = append(out, fmt.Sprintf("# … and %d more%s, agent-mcp's list", j-i-3, tail(lines[i])))
			i = j
			continue
		}
		out = append(out, lines[i])
		i++
	}
	return strings.Join(out, "\n") + "\n"
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package shell

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed bash.md
var bashDescription string

// Bash's limits (docs/tools.md §7).
const (
	// BashDefaultTimeoutMS is a command's timeout when none is given.
	BashDefaultTimeoutMS = 120_000
	// BashMaxTimeoutMS is the largest timeout a call may ask for.
	BashMaxTimeoutMS = 600_000
	// BashDefaultWaitTimeoutMS is how long a background start waits for
	// wait_for when no wait_timeout is given.
	BashDefaultWaitTimeoutMS = 30_000
	// BashMaxResultSizeChars is Bash's result budget; longer output is
	// persisted by the orchestrator, and the structured output keeps this
	// many characters.
	BashMaxResultSizeChars = 30_000
)

// DisableBackgroundEnv is the variable that, set to a true value ("1",
// "true"), turns off background tasks: run_in_background is refused and a
// command that times out is stopped instead of moved to the background.
// internal/cli reads it into [Options.DisableBackground].
const DisableBackgroundEnv = "AGENT_MCP_DISABLE_BACKGROUND_TASKS"

// Options configure the shell tools. The zero value gives the defaults.
type Options struct {
	// DisableBackground turns background tasks off (internal/cli sets it
	// from [DisableBackgroundEnv]).
	DisableBackground bool
	// KillGrace is how long a process group has between SIGTERM and
	// SIGKILL; default 2s.
	KillGrace time.Duration
	// OutputFileLimit caps each task's output file; default 64 MiB.
	OutputFileLimit int64
	// ProgressInterval is how often a running foreground command reports
	// its latest output line as progress; default 1s.
	ProgressInterval time.Duration
	// MaxBackgroundTasks caps the background tasks one session may have
	// running at once; default DefaultMaxBackgroundTasks. Over it,
	// run_in_background is refused and a command that times out is
	// stopped instead of moved to the background.
	MaxBackgroundTasks int
	// MaxServerBackgroundTasks caps the background tasks running at once
	// across every session served by one Bash tool (one server); default
	// DefaultMaxServerBackgroundTasks. Over it, as over the session's cap,
	// run_in_background is refused and a timed-out command is stopped.
	MaxServerBackgroundTasks int

	// slots counts the running background tasks of every session this
	// tool serves; Bash makes it.
	slots *backgroundSlots
	// Sandbox confines every command (nil: commands run unconfined)
	// but the excluded ones.
	Sandbox *sandbox.Sandbox
	// EnvAllow are the server's variables a command gets beyond those a
	// shell and a build need (sandbox.env.allow; proc.CommandEnv): a
	// name, or a prefix ending in "*".
	EnvAllow []string
	// Excluded are the commands that run outside the sandbox
	// (sandbox.excludedCommands).
	Excluded ExcludedCommands
	// Stats, if set, counts the commands started and the background
	// tasks running, for the server's metrics.
	Stats *Stats
}

// DefaultMaxBackgroundTasks is how many background tasks a session may
// have running at once unless configured: each holds a pseudo-terminal
// (a system-wide resource, 4096 by default on Linux) and descriptors.
const DefaultMaxBackgroundTasks = 32

// DefaultMaxServerBackgroundTasks is how many background tasks one server
// may have running at once across its sessions unless configured: an HTTP
// server's sessions at their own cap would otherwise hold thousands of the
// system's pseudo-terminals.
const DefaultMaxServerBackgroundTasks = 128

func (o Options) maxBackground() int { return cmpOr(o.MaxBackgroundTasks, DefaultMaxBackgroundTasks) }

// BashInput is Bash's input.
type BashInput struct {
	Command         string   `json:"command" jsonschema:"The bash command line to run"`
	Timeout         *float64 `json:"timeout,omitempty"`
	Description     string   `json:"description,omitempty" jsonschema:"A short description of what the command does, in 5-10 words"`
	RunInBackground bool     `json:"run_in_background,omitempty" jsonschema:"Run the command as a background task and return its id at once; read its output with TaskOutput"`
	WaitFor         string   `json:"wait_for,omitempty" jsonschema:"With run_in_background: return once the task is ready, when its output matches this regular expression (RE2 syntax), or, written port:N, when it listens on TCP port N"`
	WaitTimeout     *float64 `json:"wait_timeout,omitempty"`
}

// CommandLine is the line the call runs (tools.CommandInput).
func (in *BashInput) CommandLine() string { return in.Command }

// BashOutput is Bash's structured output.
type BashOutput struct {
	// Stdout is the command's output (stderr is merged into it), trimmed,
	// at most BashMaxResultSizeChars characters.
	Stdout string `json:"stdout"`
	// Stderr is always empty: stderr is merged into Stdout.
	Stderr string `json:"stderr"`
	// ExitCode is the shell's exit status (128+N after signal N); absent
	// while the command runs on in the background.
	ExitCode *int `json:"exitCode,omitempty"`
	// Interrupted is true when the command was stopped or moved to the
	// background before it finished.
	Interrupted bool `json:"interrupted"`
	// BackgroundTaskID names the task for TaskOutput and TaskStop.
	BackgroundTaskID string `json:"backgroundTaskId,omitempty"`
	// OutputFile is the file the command's output goes to.
	OutputFile string `json:"outputFile,omitempty"`
	// ReturnCodeInterpretation explains a non-zero exit that is not an
	// error (grep without a match, diff of differing files, ...).
	ReturnCodeInterpretation string `json:"returnCodeInterpretation,omitempty"`
	// StdoutTruncated is true when Stdout holds only part of the output.
	StdoutTruncated bool `json:"stdoutTruncated,omitempty"`
	// Cwd is the session's working directory after the call.
	Cwd string `json:"cwd,omitempty"`
	// CwdReset is true when the command left the working directories and
	// the directory was reset.
	CwdReset bool `json:"cwdReset,omitempty"`
}

// Bash returns the Bash tool.
func Bash(opts Options) *tools.Tool {
	opts.slots = &backgroundSlots{max: cmpOr(opts.MaxServerBackgroundTasks, DefaultMaxServerBackgroundTasks), stats: opts.Stats}
	desc := bashDescription
	if opts.Sandbox.Unconfined() {
		desc = strings.TrimRight(desc, "\n") + "\n\n" + sandbox.UnconfinedNotice + "\n"
	}
	if n := networkSentence(opts.Sandbox); n != "" {
		desc = strings.TrimRight(desc, "\n") + "\n\n" + n + "\n"
	}
	return tools.New(tools.Tool{
		Name:                  "Bash",
		Description:           desc,
		SearchHint:            "run a shell command",
		Core:                  true,
		MaxResultSizeChars:    BashMaxResultSizeChars,
		AbortsSiblingsOnError: true,
	}, tools.Handler[BashInput]{
		Schema: func(s *jsonschema.Schema) {
			// The other descriptions are in the input's tags; this one
			// quotes a constant.
			tools.Describe(s, map[string]string{
				"timeout":      fmt.Sprintf("Timeout in milliseconds (at most %d); when it passes the command moves to the background", BashMaxTimeoutMS),
				"wait_timeout": fmt.Sprintf("With wait_for: how long to wait for the task to be ready, in milliseconds (at most %d); the task keeps running after it", BashMaxTimeoutMS),
			})
			tools.Prop(s, "wait_for").MinLength = tools.Ptr(1)
			tools.Prop(s, "wait_timeout").Minimum = tools.Ptr(1.0)
			tools.Prop(s, "wait_timeout").Maximum = tools.Ptr(float64(BashMaxTimeoutMS))
			tools.Default(s, "wait_timeout", BashDefaultWaitTimeoutMS)
			tools.Prop(s, "command").MinLength = tools.Ptr(1)
			tools.Prop(s, "timeout").Minimum = tools.Ptr(1.0)
			tools.Prop(s, "timeout").Maximum = tools.Ptr(float64(BashMaxTimeoutMS))
			tools.Default(s, "timeout", BashDefaultTimeoutMS)
			tools.Default(s, "run_in_background", false)
		},
		Validate: func(_ context.Context, in *BashInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.Command) == "" {
				return errors.New("command is empty: give the bash command line to run")
			}
			if _, err := timeoutOf(in.Timeout, BashDefaultTimeoutMS, "timeout"); err != nil {
				return err
			}
			if in.RunInBackground && opts.DisableBackground {
				return fmt.Errorf("run_in_background is not available: background tasks are turned off on this server (%s)", DisableBackgroundEnv)
			}
			return validateWait(in)
		},
		ReadOnly:        func(in *BashInput) bool { return shellcmd.IsReadOnly(in.Command) },
		ConcurrencySafe: func(in *BashInput) bool { return shellcmd.IsReadOnly(in.Command) },
		Call: func(ctx context.Context, in *BashInput, uc *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
			res, err := runBash(ctx, opts, in, uc, progress)
			if err == nil && res != nil && opts.Sandbox.Unconfined() {
				// Last, so that a result still starts as its kind says
				// (Exit code N).
				res.Text = strings.TrimRight(res.Text, "\n") + "\n" + sandbox.UnconfinedNotice
			}
			return res, err
		},
	})
}

// timeoutOf checks a millisecond timeout given as field and returns it as a
// duration (dflt when absent).
func timeoutOf(ms *float64, dflt int, field string) (time.Duration, error) {
	if ms == nil {
		return time.Duration(dflt) * time.Millisecond, nil
	}
	v := *ms
	if math.IsNaN(v) || v < 1 || v > BashMaxTimeoutMS {
		return 0, fmt.Errorf("%s must be between 1 and %d milliseconds, got %v", field, BashMaxTimeoutMS, v)
	}
	return time.Duration(v * float64(time.Millisecond)), nil
}

func runBash(ctx context.Context, opts Options, in *BashInput, uc *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
	if uc == nil || uc.Session == nil {
		return nil, errors.New("Bash needs a session")
	}
	sess := uc.Session
	timeout, err := timeoutOf(in.Timeout, BashDefaultTimeoutMS, "timeout")
	if err != nil {
		return nil, err
	}
	m := managerFor(sess)

	// Start in the session's directory; if it has gone, in the first
	// working directory.
	dir, notice := uc.Dir(), ""
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		home := sess.WorkDirs()[0]
		notice = fmt.Sprintf("The working directory %s no longer exists; the command ran in %s instead.", dir, home)
		dir = home
	}
	spec := startSpec{
		command: in.Command, description: in.Description, script: in.Command, dir: dir,
		grace: cmpOr(opts.KillGrace, defaultGrace), fileLimit: cmpOr(opts.OutputFileLimit, defaultFileLimit),
		maxBackground: opts.maxBackground(), slots: opts.slots, stats: opts.Stats,
		sandbox: opts.Sandbox, excluded: opts.Excluded.Match(in.Command), workDirs: sess.WorkDirs(), stateDir: sess.StateDir(), envAllow: opts.EnvAllow,
		egress: egressFor(ctx, opts.Sandbox, uc, in.Command), session: sess,
	}

	if in.RunInBackground {
		return runBackground(ctx, m, spec, in, dir, notice)
	}
	return runForeground(ctx, m, opts, spec, in, sess, dir, notice, timeout, progress)
}

// runBackground starts the command as a background task and answers at
// once, or once its output shows in.WaitFor (awaitReady).
func runBackground(ctx context.Context, m *Manager, spec startSpec, in *BashInput, dir, notice string) (*tools.Result, error) {
	spec.pty, spec.visible = true, true
	t, err := m.start(spec)
	if err != nil {
		return nil, err
	}
	res := &tools.Result{Output: BashOutput{BackgroundTaskID: t.ID, OutputFile: t.OutputPath, Cwd: dir}}
	if in.WaitFor == "" {
		res.Text = fmt.Sprintf("Command running in the background as task %s. Its output goes to %s; check it with TaskOutput, type into it with TaskInput and end it with TaskStop.",
			t.ID, t.OutputPath)
	} else if res, err = awaitReady(ctx, m, t, in, dir); err != nil {
		return nil, err
	}
	if notice != "" {
		res.Text = notice + "\n" + res.Text
		res.Modify = func(s *tools.Session) { s.SetCwd(dir) }
	}
	return res, nil
}

// runForeground runs the command to its end, reporting its last line of
// output as progress; at the timeout it moves to the background (or, in
// an MCP task, is published as a background task and waited for).
func runForeground(ctx context.Context, m *Manager, opts Options, spec startSpec, in *BashInput, sess *tools.Session, dir, notice string, timeout time.Duration, progress tools.Progress) (*tools.Result, error) {
	// The shell reports its final directory on a descriptor it inherits
	// (a file the server made and reads back through its own
	// descriptor), not to a name a command could have planted a link at.
	root, err := m.tasksDir()
	if err != nil {
		return nil, err
	}
	cwdName := "cwd-" + tools.RandomID()[:12]
	cwdFile, err := createNew(root, cwdName)
	if err != nil {
		return nil, fmt.Errorf("creating the shell's directory report: %w", err)
	}
	_ = root.Remove(cwdName)
	defer cwdFile.Close()
	spec.script = cwdTrailer + in.Command
	spec.files = []*os.File{cwdFile}
	t, err := m.start(spec)
	if err != nil {
		return nil, err
	}

	interval := cmpOr(opts.ProgressInterval, time.Second)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	// A call the server answers with an MCP task once it has run its
	// inline window is published as a background task then (TaskList,
	// TaskOutput, TaskInput and TaskStop see it) and waited for to its
	// end: the client polls the task instead of a timeout moving it away.
	inline, inTask := tools.MCPTaskInline(ctx)
	if inTask {
		timeout = inline
	}
	published := false
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timerC := timer.C
	lastLine := ""
	for {
		select {
		case <-t.Done():
			t.mu.Lock()
			for _, r := range t.refused {
				notice = strings.TrimPrefix(notice+"\n"+r, "\n")
			}
			t.mu.Unlock()
			if !spec.excluded {
				// A read the private home refused names the setting
				// that opens it, as a refused connection names its rule.
				raw, _ := t.out.text()
				for _, n := range opts.Sandbox.PrivateHomeNotes(raw, spec.workDirs, maxRefusalLines) {
					notice = strings.TrimPrefix(notice+"\n"+n, "\n")
				}
			}
			res, fileNeeded := finishedResult(t, in.Command, notice)
			applyCwd(res, sess, cwdFile, dir)
			if published {
				// It stays listed, as a finished background task does.
				res.Output.(*BashOutput).BackgroundTaskID = t.ID
				return res, nil
			}
			// Everything is in the result unless fileNeeded: the file is
			// not kept.
			if m.letGo(t, fileNeeded) && !fileNeeded {
				res.Output.(*BashOutput).OutputFile = ""
			}
			return res, nil
		case <-ctx.Done():
			m.Stop(t)
			if !published {
				m.letGo(t, false)
			}
			return nil, fmt.Errorf("the command was stopped and its processes ended: %w", context.Cause(ctx))
		case <-timerC:
			if inTask {
				timerC = nil
				published = publishForTask(m, t, opts)
				continue
			}
			return timedOutResult(m, t, timeout, opts.DisableBackground, opts.maxBackground(), opts.slots, notice), nil
		case <-ticker.C:
			if line := t.out.lastLine(); line != "" && line != lastLine {
				lastLine = line
				elapsed := time.Since(t.Started)
				progress(tools.ProgressUpdate{
					Progress: math.Round(elapsed.Seconds()*10) / 10,
					Total:    timeout.Seconds(),
					Message:  line,
				})
			}
		}
	}
}

// cwdTrailer makes the shell write its final directory on exit to the
// descriptor it inherits as 3, keeping the command's exit status. The
// descriptor moves to one bash picks (10 or above) first, so that 3 is
// free for the command. It goes on the command's first line so error
// messages keep their line numbers.
const cwdTrailer = `exec {__agent_mcp_cwd}>&3 3>&-; trap 'builtin pwd -P >&"$__agent_mcp_cwd" 2>/dev/null' EXIT; `

// finishedResult renders a command that ran to its end. fileNeeded is
// true when the result refers to the output file for what it leaves out.
func finishedResult(t *Task, command, notice string) (res *tools.Result, fileNeeded bool) {
	status, code := t.Status()
	raw, windowed := t.out.text()
	output := trimOutput(raw)
	out := BashOutput{ExitCode: &code, OutputFile: t.OutputPath, Interrupted: status == StatusKilled}
	out.Stdout, out.StdoutTruncated = headChars(output, BashMaxResultSizeChars)
	out.StdoutTruncated = out.StdoutTruncated || windowed
	res = &tools.Result{Output: &out}
	isError := code != 0
	if code == 1 {
		if why := benignExit(command); why != "" {
			isError = false
			out.ReturnCodeInterpretation = why
		}
	}
	var b strings.Builder
	if isError {
		fmt.Fprintf(&b, "Exit code %d\n", code)
		// Error results are not persisted by the orchestrator, so a long
		// one is cut here, pointing at the full output.
		cut := middleCut(output, BashMaxResultSizeChars, t.OutputPath)
		fileNeeded = len(cut) != len(output)
		output = cut
	}
	b.WriteString(output)
	if windowed && !isError {
		// The result holds the output's head and tail; when it is
		// persisted, the whole output comes from the file.
		res.FullText = t.out.fullText()
		if total, written := t.out.size(); total > written {
			res.FullTextNote = fmt.Sprintf("The command printed %s; the saved output stops at the task output cap of %s (%s dropped).",
				tools.FormatSize(total), tools.FormatSize(t.out.limit), tools.FormatSize(total-written))
		}
	}
	if notice != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(notice)
	}
	res.Text = strings.TrimRight(b.String(), "\n")
	res.IsError = isError
	return res, fileNeeded || windowed
}

// publishForTask makes a command that runs as an MCP task a background
// task, when background tasks are on and there is room for one; the
// command runs on either way (the MCP task is the client's handle).
func publishForTask(m *Manager, t *Task, opts Options) bool {
	if opts.DisableBackground || m.runningBackground() >= opts.maxBackground() || !t.takeSlot(opts.slots) {
		return false
	}
	m.publish(t, 0) // the client has seen none of its output
	return true
}

// timedOutResult moves a command that ran past its timeout to the
// background, or stops it when background tasks are off.
func timedOutResult(m *Manager, t *Task, timeout time.Duration, noBackground bool, maxBackground int, slots *backgroundSlots, notice string) *tools.Result {
	why := ""
	switch {
	case noBackground:
		why = "background tasks are turned off on this server"
	case m.runningBackground() >= maxBackground:
		why = fmt.Sprintf("this session already has %d background tasks running, the most allowed (--max-background-tasks); end one with TaskStop to make room", maxBackground)
	case !t.takeSlot(slots):
		why = slots.full() + "; end one with TaskStop to make room"
	}
	if why != "" {
		m.Stop(t)
		_, code := t.Status()
		raw, _ := t.out.text()
		m.letGo(t, true) // the result names the file
		output := middleCut(trimOutput(raw), BashMaxResultSizeChars, t.OutputPath)
		out := BashOutput{ExitCode: &code, Interrupted: true, OutputFile: t.OutputPath}
		out.Stdout, out.StdoutTruncated = headChars(output, BashMaxResultSizeChars)
		text := fmt.Sprintf("Command timed out after %s and was stopped (its processes were ended): %s.", formatDuration(timeout), why)
		if output != "" {
			text = output + "\n\n" + text
		}
		if notice != "" {
			text += "\n" + notice
		}
		return &tools.Result{Text: text, IsError: true, Output: &out}
	}
	_, shown := t.out.size()
	m.publish(t, shown)
	raw, windowed := t.out.text()
	output := trimOutput(raw)
	out := BashOutput{Interrupted: true, BackgroundTaskID: t.ID, OutputFile: t.OutputPath}
	out.Stdout, out.StdoutTruncated = headChars(output, BashMaxResultSizeChars)
	out.StdoutTruncated = out.StdoutTruncated || windowed
	text := fmt.Sprintf("Command did not finish within %s and was moved to the background as task %s. Its output goes on to %s; check it with TaskOutput and end it with TaskStop.",
		formatDuration(timeout), t.ID, t.OutputPath)
	if output != "" {
		text = output + "\n\n" + text
	}
	if notice != "" {
		text += "\n" + notice
	}
	return &tools.Result{Text: text, Output: &out}
}

// applyCwd carries the shell's final directory into the session when it is
// inside the working directories, and resets the directory with a notice
// when it is not.
func applyCwd(res *tools.Result, sess *tools.Session, cwdFile *os.File, startDir string) {
	out := res.Output.(*BashOutput)
	b := make([]byte, 4096)
	n, err := cwdFile.ReadAt(b, 0)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	b = b[:n]
	// The last line: the command could write to the descriptor too.
	final := strings.TrimRight(string(b), "\n")
	if i := strings.LastIndexByte(final, '\n'); i >= 0 {
		final = final[i+1:]
	}
	if err != nil || final == "" || !filepath.IsAbs(final) {
		// The shell did not report (exec, killed, directory removed).
		out.Cwd = startDir
		if startDir != sess.Cwd() {
			res.Modify = func(s *tools.Session) { s.SetCwd(startDir) }
		}
		return
	}
	conf := confine.New(sess.WorkDirs())
	if conf.Contains(final) {
		out.Cwd = final
		if sameDir(final, sess.Cwd()) {
			out.Cwd = sess.Cwd()
			return
		}
		res.Modify = func(s *tools.Session) { s.SetCwd(final) }
		return
	}
	home := sess.WorkDirs()[0]
	out.Cwd, out.CwdReset = home, true
	res.Modify = func(s *tools.Session) { s.SetCwd(home) }
	msg := fmt.Sprintf("The shell ended in %s, outside the working directories; the working directory was reset to %s.", final, home)
	if res.Text != "" {
		res.Text += "\n"
	}
	res.Text += msg
}

// sameDir reports whether a and b are the same directory once symlinks
// are resolved.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// benignExits say why exit 1 of these programs is not a failure.
var benignExits = map[string]string{
	"grep":  "No matches found",
	"egrep": "No matches found",
	"fgrep": "No matches found",
	"rg":    "No matches found",
	"diff":  "Files differ",
	"test":  "Condition is false",
	"[":     "Condition is false",
	"find":  "Some directories were inaccessible",
}

// benignExit returns why exit status 1 of command is not an error, or ""
// when it is one. The status is the last top-level command's, so that is
// the program looked at (through pipes, && and ||).
func benignExit(command string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) == 0 {
		return ""
	}
	st := f.Stmts[len(f.Stmts)-1]
	for {
		if st.Negated || st.Cmd == nil {
			return "" // `! grep` fails when grep matches
		}
		bin, ok := st.Cmd.(*syntax.BinaryCmd)
		if !ok {
			break
		}
		st = bin.Y
	}
	if _, ok := st.Cmd.(*syntax.TestClause); ok {
		return "Condition is false"
	}
	src := command[st.Cmd.Pos().Offset():min(int(st.Cmd.End().Offset()), len(command))]
	s, err := shellcmd.Parse(src)
	if err != nil || len(s.Commands) == 0 {
		return ""
	}
	name, ok := s.Commands[0].Name()
	if !ok {
		return ""
	}
	return benignExits[filepath.Base(name)]
}

// trimOutput drops leading blank lines and trailing whitespace, and
// replaces bytes that are not UTF-8.
func trimOutput(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for {
		nl := strings.IndexByte(s, '\n')
		if nl < 0 || strings.TrimSpace(s[:nl]) != "" {
			break
		}
		s = s[nl+1:]
	}
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return strings.TrimRight(s, " \t\r\n")
}

// headChars returns the first n characters of s, and whether s was longer.
func headChars(s string, n int) (string, bool) {
	cut := truncateRunes(s, n)
	return cut, len(cut) < len(s)
}

// middleCut keeps the first and last half of n characters of s around a
// note naming the file that holds everything.
func middleCut(s string, n int, file string) string {
	runes := []rune(s)
	if len(runes) <= n {
		return s
	}
	half := n / 2
	return fmt.Sprintf("%s\n\n[... %d characters omitted; the whole output is in %s ...]\n\n%s",
		string(runes[:half]), len(runes)-2*half, file, string(runes[len(runes)-half:]))
}

// formatDuration writes a timeout the way people say it: 2m, 1m30s, 45s,
// 1.5s, 250ms.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d%time.Second != 0 && d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	m, s := int(d.Minutes()), int(d.Seconds())%60
	switch {
	case m == 0:
		return fmt.Sprintf("%ds", s)
	case s == 0:
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dm%ds", m, s)
}

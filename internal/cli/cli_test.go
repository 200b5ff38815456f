package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/permissions"
)

func TestMain(m *testing.M) {
	// The upstream MCP server the setupChat tests start: this binary.
	testmodel.RunUpstreamIfAsked()
	os.Exit(m.Run())
}

// isolate points every place agent-mcp reads settings or keeps state at
// fresh directories, so the user's own never take part, and returns the
// home directory.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for _, v := range []string{"HOME", "CLAUDE_CONFIG_DIR", "AGENT_MCP_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	t.Setenv("HOME", home)
	for _, v := range []string{"AGENT_MCP_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		t.Setenv(v, "")
	}
	return home
}

// TestRun_dispatch: Run picks the subcommand by its first argument, prints
// the usage where it was asked for (stdout) or where a mistake is
// reported (stderr), and maps the outcome to the exit code.
func TestRun_dispatch(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string // substrings expected ("" for none expected)
	}{
		{"no_arguments", nil, 2, "", "Usage:\n  agent-mcp <command>"},
		{"help", []string{"help"}, 0, "Commands:\n  serve", ""},
		{"dash_help", []string{"--help"}, 0, "Run 'agent-mcp <command> --help'", ""},
		{"unknown_command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, "agent-mcp " + Version, ""},
		{"version_stray_argument", []string{"version", "x"}, 2, "", `unexpected argument "x"`},
		{"command_help", []string{"chat", "--help"}, 0, "Usage: agent-mcp chat", ""},
		{"bad_flag", []string{"serve", "--no-such-flag"}, 2, "", "agent-mcp serve: unknown flag --no-such-flag"},
		{"bad_value", []string{"chat", "--output-format", "xml"}, 1, "", `agent-mcp chat: --output-format "xml": expected text, json or stream-json`},
		{"chat_prompt_without_p", []string{"chat", "hello"}, 2, "", `unexpected argument "hello" (use -p`},
		{"serve_bad_mode", []string{"serve", "--permission-mode", "sometimes", "--sandbox", "off"}, 1, "", "agent-mcp serve: --permission-mode"},
		{"exit_code_of_the_command", []string{"chat", "-p", "--model", "nope", "hi"}, 1, "", "agent-mcp chat: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), c.args, &stdout, &stderr)
			if code != c.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout.String(), stderr.String())
			}
			if c.stdout != "" && !strings.Contains(stdout.String(), c.stdout) {
				t.Errorf("stdout %q does not hold %q", stdout.String(), c.stdout)
			}
			if c.stderr != "" && !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stderr %q does not hold %q", stderr.String(), c.stderr)
			}
			if c.code == 0 && stderr.Len() > 0 {
				t.Errorf("a success wrote to stderr: %q", stderr.String())
			}
		})
	}
}

// TestRun_command_exit_code: a command's error that carries an exit code
// (chat's max turns, interrupted) gives that code, its message printed
// only when there is one.
func TestRun_command_exit_code(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		code int
		msg  string
	}{
		{&exitError{code: exitMaxTurns, err: errors.New("max turns")}, exitMaxTurns, "agent-mcp chat: max turns\n"},
		{&exitError{code: exitInterrupted}, exitInterrupted, ""},
	} {
		var stderr bytes.Buffer
		if code := runCommand(context.Background(), command{name: "chat", run: func(context.Context, []string, io.Writer, io.Writer) error { return c.err }}, nil, io.Discard, &stderr); code != c.code || stderr.String() != c.msg {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.err, code, stderr.String(), c.code, c.msg)
		}
	}
}

// TestParseChatFlags: flags may follow the prompt, --resume without an id
// asks for a picker, and the combinations that make no sense are refused
// naming the flags.
func TestParseChatFlags(t *testing.T) {
	t.Parallel()
	f, prompt, err := parseChatFlags([]string{"-p", "fix", "the", "bug", "--max-turns", "3", "--model", "openai/x", "--", "-v"}, io.Discard, io.Discard)
	if err != nil || !f.print || prompt != "fix the bug -v" || f.maxTurns != 3 || f.model != "openai/x" {
		t.Fatalf("interspersed: %+v %q %v", f, prompt, err)
	}
	for _, args := range [][]string{{"--resume"}, {"--resume", "--think"}} {
		f, _, err := parseChatFlags(args, io.Discard, io.Discard)
		if err != nil || !f.pickResume || f.resume != "" {
			t.Errorf("%q: pick %v, resume %q, %v; want the picker", args, f != nil && f.pickResume, f.resume, err)
		}
	}
	if f, _, err := parseChatFlags([]string{"--resume", "abc"}, io.Discard, io.Discard); err != nil || f.pickResume || f.resume != "abc" {
		t.Errorf("--resume abc: %+v %v", f, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--continue", "--resume", "abc"}, "--continue and --resume cannot be used together"},
		{[]string{"-c", "--resume"}, "--continue and --resume cannot be used together"},
		{[]string{"-p", "hi", "--resume"}, "--resume needs a conversation id with -p"},
		{[]string{"--output-format", "yaml"}, `--output-format "yaml"`},
	} {
		if _, _, err := parseChatFlags(c.args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	var stderr bytes.Buffer
	if _, _, err := parseChatFlags([]string{"--max-turns", "many"}, io.Discard, &stderr); !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), `invalid value "many" for flag -max-turns`) {
		t.Errorf("--max-turns many: %v, stderr %q", err, stderr.String())
	}
	if _, _, err := parseChatFlags([]string{"--help"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
}

// TestSettingsLoading: the session options come from the flags and the
// settings files (the user's and the project's, the project's own
// widening only when trusted), and bad values are refused naming them.
func TestSettingsLoading(t *testing.T) {
	home := isolate(t)
	project := t.TempDir()
	extra := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, "claude_config_dir", "settings.json"), `{"model":"openai/from-user","permissions":{"defaultMode":"acceptEdits","additionalDirectories":[`+strconv.Quote(extra)+`]}}`)
	write(filepath.Join(project, ".claude", "settings.json"), `{"permissions":{"defaultMode":"bypassPermissions"}}`)
	load := func(args ...string) (*workspaceFlags, error) {
		t.Helper()
		f, _, err := parseChatFlags(append([]string{"--cwd", project, "--sandbox", "off"}, args...), io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.w.sessionOptions()
		return &f.w, err
	}
	w, err := load()
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := w.sessionOptions()
	real := func(d string) string { r, _ := filepath.EvalSymlinks(d); return r }
	if opts.Cwd != real(project) || len(opts.WorkDirs) != 1 || opts.WorkDirs[0] != real(extra) {
		t.Errorf("directories %q %q, want %q and the user's additional %q", opts.Cwd, opts.WorkDirs, project, extra)
	}
	if opts.Mode != permissions.ModeAcceptEdits {
		t.Errorf("mode %q: the user's acceptEdits, not the untrusted project's bypassPermissions", opts.Mode)
	}
	perm, _ := w.permissionSetup(opts.Cwd)
	if chatModel("", perm.settings.Model) != "openai/from-user" || chatModel("anthropic/flag", perm.settings.Model) != "anthropic/flag" {
		t.Errorf("the model: the settings' %q is not used below --model", perm.settings.Model)
	}
	if len(perm.settings.Ignored) == 0 {
		t.Error("the untrusted project's defaultMode is not reported as ignored")
	}
	if w, err := load("--trust-project"); err != nil {
		t.Fatal(err)
	} else if opts, _ := w.sessionOptions(); opts.Mode != permissions.ModeBypassPermissions {
		t.Errorf("--trust-project: mode %q, want the project's bypassPermissions", opts.Mode)
	}
	if w, err := load("--permission-mode", "plan"); err != nil {
		t.Fatal(err)
	} else if opts, _ := w.sessionOptions(); opts.Mode != permissions.ModePlan {
		t.Errorf("--permission-mode plan: mode %q", opts.Mode)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--permission-mode", "sometimes"}, "--permission-mode"},
		{[]string{"--add-dir", filepath.Join(project, "missing")}, "--add-dir"},
		{[]string{"--settings", `{"permissions":{"allow":[42]}}`}, "allow"},
		{[]string{"--allowed-tools", "Bash("}, "--allowed-tools"},
	} {
		if _, err := load(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error naming %s", c.args, err, c.want)
		}
	}
	f, _, _ := parseChatFlags([]string{"--cwd", filepath.Join(project, "missing")}, io.Discard, io.Discard)
	if _, err := f.w.sessionOptions(); err == nil || !strings.Contains(err.Error(), "--cwd") {
		t.Errorf("a missing --cwd: %v", err)
	}
}

// TestSetupChat_cleans_up_on_each_failure: every way setupChat fails after
// it started the upstream MCP servers leaves none running and no session
// state behind; a setup that succeeds keeps both until close.
func TestSetupChat_cleans_up_on_each_failure(t *testing.T) {
	isolate(t)
	project := t.TempDir()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		setup func(t *testing.T)
		want  string
	}{
		{"session_state_cannot_be_made", []string{"--state-dir", notADir}, nil, "not a directory"},
		{"nothing_to_continue", []string{"--continue"}, nil, "--continue"},
		{"no_such_conversation", []string{"--resume", "no-such-id"}, nil, "no-such-id"},
		{"no_store_to_resume_from", []string{"--resume", "abc"}, func(t *testing.T) { t.Setenv("XDG_STATE_HOME", notADir) }, "no conversation store"},
		{"succeeds", nil, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup(t)
			}
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "upstream.pid")
			command, args, upEnv := testmodel.UpstreamStdio()
			cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": map[string]any{
				"command": "/bin/sh", "args": append([]string{"-c", `echo $$ > "$0"; exec "$@"`, pidFile, command}, args...), "env": upEnv}}})
			cfgFile := filepath.Join(dir, "mcp.json")
			if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			stateDir := filepath.Join(dir, "state")
			all := append([]string{"--cwd", project, "--sandbox", "off", "--state-dir", stateDir, "--strict-mcp-config", "--mcp-config", cfgFile,
				"--model", "anthropic/test", "--base-url", "http://127.0.0.1:1"}, c.args...)
			f, _, err := parseChatFlags(all, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			env, err := setupChat(context.Background(), f, nil, slog.New(slog.DiscardHandler), &stderr)
			pid := readPID(t, pidFile)
			if c.want == "" {
				if err != nil {
					t.Fatalf("setupChat: %v (%s)", err, stderr.String())
				}
				if !alive(pid) || len(entries(t, stateDir)) != 1 {
					t.Fatalf("a working chat: upstream alive %v, session state %q", alive(pid), entries(t, stateDir))
				}
				env.close()
			} else if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("setupChat: %v, want an error naming %q", err, c.want)
			}
			if alive(pid) {
				t.Errorf("the upstream server (pid %d) still runs", pid)
			}
			if left := entries(t, stateDir); len(left) > 0 {
				t.Errorf("session state left behind: %q", left)
			}
		})
	}
}

// readPID reads the process id the upstream server's shell wrote.
func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the upstream server was not started: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestHTTPFlags_options: serve's HTTP token comes from --token, else
// $AGENT_MCP_TOKEN, else is generated; the client tokens from
// --client-token, else $AGENT_MCP_CLIENT_TOKENS; bad values are named.
func TestHTTPFlags_options(t *testing.T) {
	parse := func(args ...string) *httpFlags {
		t.Helper()
		var f httpFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f.add(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	t.Setenv("AGENT_MCP_TOKEN", "")
	t.Setenv("AGENT_MCP_CLIENT_TOKENS", "")
	opts, generated, err := parse().options()
	if err != nil || !generated || len(opts.Token) != 32 {
		t.Fatalf("no token given: %q generated %v, %v", opts.Token, generated, err)
	}
	if opts, generated, _ := parse("--no-auth").options(); generated || opts.Token != "" || !opts.NoAuth {
		t.Errorf("--no-auth: token %q generated %v", opts.Token, generated)
	}
	t.Setenv("AGENT_MCP_TOKEN", "from-env")
	t.Setenv("AGENT_MCP_CLIENT_TOKENS", "ci=0123456789abcdef, ide=fedcba9876543210")
	opts, generated, err = parse().options()
	if err != nil || generated || opts.Token != "from-env" || len(opts.ClientTokens) != 2 || opts.ClientTokens[1].Name != "ide" {
		t.Errorf("from the environment: %+v generated %v, %v", opts, generated, err)
	}
	opts, _, _ = parse("--token", "from-flag", "--client-token", "one=0123456789abcdef").options()
	if opts.Token != "from-flag" || len(opts.ClientTokens) != 1 || opts.ClientTokens[0].Name != "one" {
		t.Errorf("flags over the environment: %+v", opts)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--client-token", "no-equals"}, "--client-token: expected NAME=TOKEN"},
		{[]string{"--max-sessions", "0"}, "--max-sessions must be at least 1, got 0"},
	} {
		if _, _, err := parse(c.args...).options(); err == nil || err.Error() != c.want && !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

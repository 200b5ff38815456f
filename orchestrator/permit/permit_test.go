package permit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
	"github.com/agent-mcp/agent-mcp/tools/workflow"
)

type bashIn struct {
	Command         string `json:"command"`
	RunInBackground bool   `json:"run_in_background,omitempty"`
}

type writeIn struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

type fetchIn struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
}

func (in *bashIn) CommandLine() string { return in.Command }
func (in *fetchIn) FetchURL() string   { return in.URL }

type noIn struct{}

func noop[In any](context.Context, *In, *tools.UseContext, tools.Progress) (*tools.Result, error) {
	return &tools.Result{}, nil
}

var (
	bashTool = tools.New(tools.Tool{Name: "Bash"}, tools.Handler[bashIn]{Call: noop[bashIn],
		ReadOnly: func(in *bashIn) bool { return shellcmd.IsReadOnly(in.Command) }})
	writeTool = tools.New(tools.Tool{Name: "Write"}, tools.Handler[writeIn]{Call: noop[writeIn]})
	fetchTool = tools.New(tools.Tool{Name: "WebFetch", OpenWorld: true, ReadOnly: true}, tools.Handler[fetchIn]{Call: noop[fetchIn]})
	mysteryOp = tools.New(tools.Tool{Name: "Mystery"}, tools.Handler[noIn]{Call: noop[noIn]})
	mcpWriter = tools.New(tools.Tool{Name: "mcp__srv__write", Upstream: "srv", NonDestructive: true}, tools.Handler[noIn]{Call: noop[noIn]})
)

type fixture struct {
	dir, outside string
	sess         *tools.Session
}

func newFixture(t *testing.T, mode permissions.Mode) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: filepath.Join(root, "app"), outside: filepath.Join(root, "outside")}
	for _, d := range []string{f.dir + "/.git", f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(f.outside+"/secret.txt", []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.outside, f.dir+"/link-out"); err != nil {
		t.Fatal(err)
	}
	f.sess, err = tools.NewSession(tools.SessionOptions{Cwd: f.dir, Mode: mode, StateRoot: filepath.Join(root, "state")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.sess.Close() })
	return f
}

func rules(t *testing.T, dir string, deny, ask, allow []string) *permissions.RuleSet {
	t.Helper()
	s := &settings.Settings{Rules: &permissions.RuleSet{}}
	a := permissions.Anchors{Home: "/nonexistent-home", Root: dir, Cwd: dir}
	for _, l := range []struct {
		b permissions.Behavior
		r []string
	}{{permissions.Deny, deny}, {permissions.Ask, ask}, {permissions.Allow, allow}} {
		if err := s.AddRules(l.b, l.r, "test", a); err != nil {
			t.Fatal(err)
		}
	}
	return s.Rules
}

func (f *fixture) decide(t *testing.T, p *Permitter, tool *tools.Tool, input string, asker tools.Asker, hook permissions.Decision) permissions.Decision {
	t.Helper()
	in, err := tool.Decode(json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	uc := &tools.UseContext{Session: f.sess, Asker: asker}
	return p.Decide(context.Background(), orchestrator.PermissionRequest{
		Tool: tool, Input: in, Raw: json.RawMessage(input), UC: uc,
		HookDecision: hook,
	})
}

type call struct {
	name  string
	tool  *tools.Tool
	input string // %D is the working directory, %O the outside one
	want  permissions.Behavior
}

func run(t *testing.T, f *fixture, p *Permitter, calls []call) {
	t.Helper()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			input := strings.NewReplacer("%D", f.dir, "%O", f.outside).Replace(c.input)
			d := f.decide(t, p, c.tool, input, nil, permissions.Decision{})
			if d.Behavior != c.want {
				t.Fatalf("%s %s: got %s (%s), want %s", c.tool.Name, input, d.Behavior, d.Reason, c.want)
			}
			if d.Behavior != permissions.Allow && d.Reason == "" {
				t.Fatal("a refusal must give a reason")
			}
		})
	}
}

func TestDecide_trustingHostWithoutSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	p := New(Options{TrustHost: true})
	run(t, f, p, []call{
		{"read inside", fs.Read(), `{"file_path": "%D/a.txt"}`, permissions.Allow},
		{"read relative inside", fs.Read(), `{"file_path": "a.txt"}`, permissions.Allow},
		{"read outside", fs.Read(), `{"file_path": "%O/secret.txt"}`, permissions.Ask},
		{"read through a symlink out", fs.Read(), `{"file_path": "%D/link-out/secret.txt"}`, permissions.Ask},
		{"read with dotdot out", fs.Read(), `{"file_path": "%D/../outside/secret.txt"}`, permissions.Ask},
		{"write inside", writeTool, `{"file_path": "%D/new.go", "content": ""}`, permissions.Allow},
		{"write outside", writeTool, `{"file_path": "%O/x", "content": ""}`, permissions.Ask},
		{"write protected", writeTool, `{"file_path": "%D/.git/config", "content": ""}`, permissions.Ask},
		{"write shell rc", writeTool, `{"file_path": "%D/.bashrc", "content": ""}`, permissions.Ask},
		{"bash inside", bashTool, `{"command": "make test && echo ok"}`, permissions.Allow},
		{"bash redirect outside", bashTool, `{"command": "echo x > %O/y"}`, permissions.Ask},
		{"bash redirect into .git", bashTool, `{"command": "echo x > .git/hooks/pre-commit"}`, permissions.Ask},
		{"bash removing outside", bashTool, `{"command": "rm -rf %O"}`, permissions.Ask},
		{"bash removing home", bashTool, `{"command": "cd . && rm -rf ~"}`, permissions.Ask},
		{"bash reading outside", bashTool, `{"command": "cat %O/secret.txt"}`, permissions.Ask},
		{"bash going up", bashTool, `{"command": "cat ../outside/secret.txt"}`, permissions.Ask},
		{"bash option with a path", bashTool, `{"command": "sort --output=%O/x a"}`, permissions.Ask},
		{"bash with /dev/null", bashTool, `{"command": "diff /dev/null a.txt"}`, permissions.Allow},
		{"bash reading inside by absolute path", bashTool, `{"command": "cat %D/a.txt"}`, permissions.Allow},
		{"bash cd out and echo", bashTool, `{"command": "cd / && echo left"}`, permissions.Allow},
		{"bash cd out and remove", bashTool, `{"command": "cd / && rm -rf home"}`, permissions.Ask},
		{"bash cd out and read", bashTool, `{"command": "cd %O; cat secret.txt"}`, permissions.Ask},
		{"bash cd in and work", bashTool, `{"command": "mkdir -p sub && cd sub && touch a && ls"}`, permissions.Allow},
		{"bash cd to a computed dir", bashTool, `{"command": "cd $D && rm x"}`, permissions.Ask},
		{"bash computed program", bashTool, `{"command": "$CMD x"}`, permissions.Ask},
		{"bash that does not parse", bashTool, `{"command": "echo 'x"}`, permissions.Ask},
		{"todo", workflow.TodoWrite(), `{"todos": []}`, permissions.Allow},
		{"fetch", fetchTool, `{"url": "https://example.com/", "prompt": "p"}`, permissions.Allow},
		{"tool without paths", mysteryOp, `{}`, permissions.Ask},
	})
}

func TestDecide_strictDefaultMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	p := New(Options{Rules: rules(t, f.dir, nil, nil, []string{"Bash(make *)", "WebFetch(domain:go.dev)", "Edit(/gen/**)"})})
	run(t, f, p, []call{
		{"read-only command", bashTool, `{"command": "ls -la | grep x"}`, permissions.Allow},
		{"allowed command", bashTool, `{"command": "make test"}`, permissions.Allow},
		{"allowed and read-only", bashTool, `{"command": "make test && git status"}`, permissions.Allow},
		{"allowed then not", bashTool, `{"command": "make test && npm publish"}`, permissions.Ask},
		{"write inside needs confirmation", writeTool, `{"file_path": "%D/a.go", "content": ""}`, permissions.Ask},
		{"write allowed by an Edit rule", writeTool, `{"file_path": "%D/gen/a.go", "content": ""}`, permissions.Allow},
		{"fetch allowed domain", fetchTool, `{"url": "https://go.dev/doc", "prompt": "p"}`, permissions.Allow},
		{"fetch other domain", fetchTool, `{"url": "https://example.com/", "prompt": "p"}`, permissions.Ask},
		{"mcp tool", mcpWriter, `{}`, permissions.Ask},
	})
}

func TestDecide_modes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode  permissions.Mode
		calls []call
	}{
		{permissions.ModeAcceptEdits, []call{
			{"write inside", writeTool, `{"file_path": "%D/a.go", "content": ""}`, permissions.Allow},
			{"write outside", writeTool, `{"file_path": "%O/a.go", "content": ""}`, permissions.Ask},
			{"write protected", writeTool, `{"file_path": "%D/.git/config", "content": ""}`, permissions.Ask},
			{"command", bashTool, `{"command": "npm publish"}`, permissions.Ask},
		}},
		{permissions.ModePlan, []call{
			{"read", fs.Read(), `{"file_path": "%D/a.txt"}`, permissions.Allow},
			{"read-only command", bashTool, `{"command": "git log"}`, permissions.Allow},
			{"write", writeTool, `{"file_path": "%D/a.go", "content": ""}`, permissions.Deny},
			{"command", bashTool, `{"command": "make"}`, permissions.Deny},
			{"todo list", workflow.TodoWrite(), `{"todos": []}`, permissions.Allow},
		}},
		{permissions.ModeDontAsk, []call{
			{"read inside", fs.Read(), `{"file_path": "%D/a.txt"}`, permissions.Allow},
			{"read outside", fs.Read(), `{"file_path": "%O/secret.txt"}`, permissions.Deny},
			{"command", bashTool, `{"command": "make"}`, permissions.Deny},
			{"allowed command", bashTool, `{"command": "echo hi"}`, permissions.Allow},
		}},
		{permissions.ModeBypassPermissions, []call{
			{"write outside", writeTool, `{"file_path": "%O/a.go", "content": ""}`, permissions.Allow},
			{"command", bashTool, `{"command": "npm publish"}`, permissions.Allow},
			{"denied command", bashTool, `{"command": "ls && rm -rf /"}`, permissions.Deny},
			{"denied command hidden in a computed one", bashTool, `{"command": "$X -rf /"}`, permissions.Ask},
			{"write protected", writeTool, `{"file_path": "%D/.git/config", "content": ""}`, permissions.Ask},
			{"ask rule", bashTool, `{"command": "git push"}`, permissions.Ask},
		}},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			f := newFixture(t, tt.mode)
			p := New(Options{Rules: rules(t, f.dir, []string{"Bash(rm *)"}, []string{"Bash(git push *)"}, []string{"Bash(echo *)"})})
			run(t, f, p, tt.calls)
		})
	}
}

func TestDecide_denyRulesHoldEverywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeBypassPermissions)
	p := New(Options{TrustHost: true, Rules: rules(t, f.dir, []string{"Read(./secrets/**)", "Edit(//etc/**)", "Bash(curl *)", "WebFetch(domain:evil.com)", "Mystery"}, nil,
		[]string{"Read", "Edit", "Bash", "WebFetch"})})
	run(t, f, p, []call{
		{"read denied path", fs.Read(), `{"file_path": "secrets/k"}`, permissions.Deny},
		{"write denied path", writeTool, `{"file_path": "/etc/hosts", "content": ""}`, permissions.Deny},
		{"denied command in a pipeline", bashTool, `{"command": "echo x | curl -d @- http://x"}`, permissions.Deny},
		{"denied domain", fetchTool, `{"url": "https://evil.com/", "prompt": "p"}`, permissions.Deny},
		{"denied tool", mysteryOp, `{}`, permissions.Deny},
		{"allowed read", fs.Read(), `{"file_path": "src/a"}`, permissions.Allow},
	})
	if p.Filter()(mysteryOp) || !p.Filter()(bashTool) {
		t.Fatal("a whole-tool deny hides the tool, and only that one")
	}
	// A hook's allow does not override a deny rule.
	d := f.decide(t, p, bashTool, `{"command": "curl x"}`, nil, permissions.Decision{Behavior: permissions.Allow})
	if d.Behavior != permissions.Deny || d.Rule != "Bash(curl *)" {
		t.Fatalf("got %+v, want the deny rule to hold over the hook", d)
	}
}

func TestDecide_hookDecisions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	p := New(Options{Rules: rules(t, f.dir, nil, []string{"Bash(git push *)"}, nil)})
	allow := permissions.Decision{Behavior: permissions.Allow}
	if d := f.decide(t, p, bashTool, `{"command": "make"}`, nil, allow); d.Behavior != permissions.Allow {
		t.Fatalf("a hook's allow skips asking: got %+v", d)
	}
	if d := f.decide(t, p, bashTool, `{"command": "git push"}`, nil, allow); d.Behavior != permissions.Ask {
		t.Fatalf("a hook's allow must not override an ask rule: got %+v", d)
	}
	deny := permissions.Decision{Behavior: permissions.Deny, Reason: "no"}
	if d := f.decide(t, p, bashTool, `{"command": "ls"}`, nil, deny); d.Behavior != permissions.Deny || d.Reason != "no" {
		t.Fatalf("a hook's deny holds: got %+v", d)
	}
}

func TestDecide_refusalNamesTheAllowRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	p := New(Options{TrustHost: true})
	d := f.decide(t, p, fs.Read(), `{"file_path": "`+f.outside+`/secret.txt"}`, nil, permissions.Decision{})
	// It names exactly the file asked about, not its directory.
	want := "Read(/" + f.outside + "/secret.txt)"
	if d.Behavior != permissions.Ask || d.Suggestion != want {
		t.Fatalf("got %+v, want an ask suggesting %s", d, want)
	}
	// The suggested rule, once configured, allows the call.
	p2 := New(Options{TrustHost: true, Rules: rules(t, f.dir, nil, nil, []string{d.Suggestion})})
	if d := f.decide(t, p2, fs.Read(), `{"file_path": "`+f.outside+`/secret.txt"}`, nil, permissions.Decision{}); d.Behavior != permissions.Allow {
		t.Fatalf("the suggested rule does not allow the call: %+v", d)
	}
	// So does a suggested Bash rule.
	d = f.decide(t, New(Options{}), bashTool, `{"command": "npm run 'a b' *"}`, nil, permissions.Decision{})
	p3 := New(Options{Rules: rules(t, f.dir, nil, nil, []string{d.Suggestion})})
	if d2 := f.decide(t, p3, bashTool, `{"command": "npm run 'a b' *"}`, nil, permissions.Decision{}); d2.Behavior != permissions.Allow {
		t.Fatalf("suggested %q does not allow the call: %+v", d.Suggestion, d2)
	}
	if d2 := f.decide(t, p3, bashTool, `{"command": "npm run 'a b' x"}`, nil, permissions.Decision{}); d2.Behavior == permissions.Allow {
		t.Fatalf("suggested %q allows more than the call", d.Suggestion)
	}
}

// fakeAsker answers every question with a fixed answer, counting them.
type fakeAsker struct {
	answer tools.Answer
	err    error
	block  bool
	asked  atomic.Int32
	last   string
}

func (a *fakeAsker) Ask(ctx context.Context, msg string, schema map[string]any) (tools.Answer, error) {
	a.asked.Add(1)
	a.last = msg
	if a.block {
		<-ctx.Done()
		return tools.Answer{}, ctx.Err()
	}
	return a.answer, a.err
}

func TestDecide_asking(t *testing.T) {
	t.Parallel()
	accept := func(choice string) tools.Answer {
		return tools.Answer{Action: "accept", Content: map[string]any{"decision": choice}}
	}
	tests := []struct {
		name  string
		asker *fakeAsker
		want  permissions.Behavior
	}{
		{"allow once", &fakeAsker{answer: accept(tools.ChoiceAllowOnce)}, permissions.Allow},
		{"allow for the session", &fakeAsker{answer: accept(tools.ChoiceAllowSession)}, permissions.Allow},
		{"deny", &fakeAsker{answer: accept(tools.ChoiceDeny)}, permissions.Deny},
		{"decline", &fakeAsker{answer: tools.Answer{Action: "decline"}}, permissions.Deny},
		{"cancel", &fakeAsker{answer: tools.Answer{Action: "cancel"}}, permissions.Deny},
		{"accept without a choice", &fakeAsker{answer: tools.Answer{Action: "accept"}}, permissions.Deny},
		{"timeout", &fakeAsker{block: true}, permissions.Deny},
		{"error", &fakeAsker{err: context.Canceled}, permissions.Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, permissions.ModeDefault)
			p := New(Options{AskTimeout: 20 * time.Millisecond})
			in := `{"command": "npm publish"}`
			d := f.decide(t, p, bashTool, in, tt.asker, permissions.Decision{})
			if d.Behavior != tt.want {
				t.Fatalf("got %+v, want %s", d, tt.want)
			}
			if !strings.Contains(tt.asker.last, "npm publish") || !strings.Contains(tt.asker.last, "Bash") {
				t.Fatalf("the question %q does not show the tool and the command", tt.asker.last)
			}
			// Only "allow for this session" is remembered.
			d2 := f.decide(t, p, bashTool, in, &fakeAsker{answer: accept(tools.ChoiceDeny)}, permissions.Decision{})
			if remembered := d2.Behavior == permissions.Allow; remembered != (tt.name == "allow for the session") {
				t.Fatalf("second call: %+v", d2)
			}
		})
	}
}

// typeIn is a tool input that runs a command line without being Bash:
// TaskInput's, typing into a task that runs its command.
type typeIn struct {
	TaskID string `json:"task_id"`
	Input  string `json:"input"`
}

// CommandLine is the command of the task typed into; the tests name it in
// the task id.
func (in *typeIn) CommandLine() string { return in.TaskID }

// TestDecide_commandToolsAnswerToBashRules: a tool whose call runs a
// command line is judged by Bash rules as Bash is, by rules naming it, and
// refused in plan mode.
func TestDecide_commandToolsAnswerToBashRules(t *testing.T) {
	t.Parallel()
	typer := tools.New(tools.Tool{Name: "TaskInput"}, tools.Handler[typeIn]{Call: noop[typeIn]})
	for _, c := range []struct {
		name             string
		mode             permissions.Mode
		deny, ask, allow []string
		command          string
		want             permissions.Behavior
	}{
		{"a deny on Bash", permissions.ModeDefault, []string{"Bash"}, nil, nil, "make test", permissions.Deny},
		{"a deny on the command", permissions.ModeBypassPermissions, []string{"Bash(python3 *)"}, nil, nil, "python3 -q", permissions.Deny},
		{"an ask on the command", permissions.ModeDefault, nil, []string{"Bash(python3 *)"}, []string{"TaskInput"}, "python3 -q", permissions.Ask},
		{"an allow on the command", permissions.ModeDefault, nil, nil, []string{"Bash(python3 *)"}, "python3 -q", permissions.Allow},
		{"a deny naming the tool", permissions.ModeBypassPermissions, []string{"TaskInput"}, nil, nil, "python3 -q", permissions.Deny},
		{"plan mode", permissions.ModePlan, nil, nil, nil, "python3 -q", permissions.Deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, c.mode)
			p := New(Options{Rules: rules(t, f.dir, c.deny, c.ask, c.allow)})
			input, _ := json.Marshal(typeIn{TaskID: c.command, Input: "x\n"})
			d := f.decide(t, p, typer, string(input), nil, permissions.Decision{})
			if d.Behavior != c.want {
				t.Fatalf("TaskInput into %q: got %s (%s), want %s", c.command, d.Behavior, d.Reason, c.want)
			}
		})
	}
}

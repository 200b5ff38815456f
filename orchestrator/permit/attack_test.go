package permit

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// attackFixture is the workspace of issue 15's attacks: the working
// directory holds secret/ (under a Read deny), protected/ (under an Edit
// deny), a repository's .git, and a file; outside/ is next to it.
type attackFixture struct {
	root, ws, outside string
	sess              *tools.Session
}

const secretText = "TOPSECRET"

func newAttackFixture(t *testing.T, mode permissions.Mode) *attackFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &attackFixture{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	for name, content := range map[string]string{
		"ws/secret/s.txt":        secretText + "-S\n",
		"ws/protected/p.txt":     "orig\n",
		"ws/.git/config":         "[core]\n",
		"ws/.git/hooks/.keep":    "",
		"ws/a.txt":               "hello\n",
		"ws/x":                   "x\n",
		"ws/src/main.go":         "package main\n",
		"outside/o.txt":          secretText + "-O\n",
		"outside/proj/.git/HEAD": "ref: refs/heads/main\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.sess, err = tools.NewSession(tools.SessionOptions{Cwd: f.ws, Mode: mode, StateRoot: filepath.Join(root, "state")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.sess.Close() })
	return f
}

// snapshot records every file and directory under root but the session
// state, so a test can show a refused call changed nothing.
func (f *attackFixture) snapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == filepath.Join(f.root, "state") {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		} else if d.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			v += " -> " + l
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// attackRules are the settings the attacks were tried under.
var attackRules = []string{"Bash(rm *)", "Read(./secret/**)", "Edit(./protected/**)"}

type attack struct {
	name  string
	mode  permissions.Mode
	trust bool
	// deny and allow are rules besides attackRules (%W is the workspace,
	// %O the outside directory, %R their parent); noRules drops
	// attackRules.
	deny, allow []string
	noRules     bool
	tool        string
	input       string
}

// runAttacks runs each call through the real pipeline with every
// built-in tool and checks it is refused or asked (nobody answers), that
// its result holds no secret, and that nothing under the fixture changed.
func runAttacks(t *testing.T, tests []attack) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mode := tt.mode
			if mode == "" {
				mode = permissions.ModeDefault
			}
			f := newAttackFixture(t, mode)
			sub := strings.NewReplacer("%W", f.ws, "%O", f.outside, "%R", f.root).Replace
			deny := append([]string(nil), tt.deny...)
			if !tt.noRules {
				deny = append(deny, attackRules...)
			}
			for i := range deny {
				deny[i] = sub(deny[i])
			}
			allow := append([]string(nil), tt.allow...)
			for i := range allow {
				allow[i] = sub(allow[i])
			}
			rs := rules(t, f.ws, deny, nil, allow)
			pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, New(Options{Rules: rs}).Filter())
			if err != nil {
				t.Fatal(err)
			}
			p := &orchestrator.Pipeline{Pool: pool, Permit: New(Options{Rules: rs, TrustHost: tt.trust})}
			before := f.snapshot(t)
			out := p.Run(context.Background(), &tools.UseContext{Session: f.sess},
				orchestrator.Call{ID: "1", Name: tt.tool, Input: json.RawMessage(sub(tt.input))}, nil)
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if out.Decision.Behavior == permissions.Allow {
				t.Errorf("the call ran: %q", out.Result.Text)
			}
			if strings.Contains(out.Result.Text, secretText) {
				t.Errorf("the result holds a secret: %q", out.Result.Text)
			}
			after := f.snapshot(t)
			for p, v := range before {
				if after[p] != v {
					t.Errorf("%s changed: %q -> %q", p, v, after[p])
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

func bashInput(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

func writeInput(path string) string {
	b, _ := json.Marshal(map[string]string{"file_path": path, "content": "pwned\n"})
	return string(b)
}

// TestAttacks_protectedPaths: protected paths hold against wide allow
// rules, whole-tool allows and bypass mode.
func TestAttacks_protectedPaths(t *testing.T) {
	t.Parallel()
	runAttacks(t, []attack{
		{name: "a grant of a directory does not cover its .git/hooks", allow: []string{"Edit(//%R/**)"},
			tool: "Write", input: writeInput("%O/proj/.git/hooks/pre-commit")},
		{name: "a whole-tool Write allow does not cover .git/config", allow: []string{"Write"},
			tool: "Write", input: writeInput("%W/.git/config")},
		{name: "bypass mode: .cursor/mcp.json", mode: permissions.ModeBypassPermissions,
			tool: "Write", input: writeInput("%W/.cursor/mcp.json")},
		{name: "trusting host: agent-mcp's own settings", trust: true,
			tool: "Write", input: writeInput("%W/.config/agent-mcp/settings.json")},
		{name: "trusting host: agent-mcp's own mcp.json", trust: true,
			tool: "Write", input: writeInput("%W/.config/agent-mcp/mcp.json")},
		{name: "trusting host: git's XDG config", trust: true,
			tool: "Write", input: writeInput("%W/.config/git/config")},
		{name: "trusting host: fish config", trust: true,
			tool: "Write", input: writeInput("%W/.config/fish/config.fish")},
		{name: "acceptEdits: .bash_aliases", mode: permissions.ModeAcceptEdits,
			tool: "Write", input: writeInput("%W/.bash_aliases")},
		{name: "dontAsk: a write inside", mode: permissions.ModeDontAsk,
			tool: "Write", input: writeInput("%W/new.txt")},
		{name: "Edit deny: Write into protected/", mode: permissions.ModeBypassPermissions,
			tool: "Write", input: writeInput("%W/protected/p.txt")},
	})
}

// TestAttacks_bashReads: input redirections, `$(< f)`, relative and
// recursive arguments, globs and `~user` are judged as reads.
func TestAttacks_bashReads(t *testing.T) {
	t.Parallel()
	trust := func(name, cmd string) attack {
		return attack{name: name, trust: true, tool: "Bash", input: bashInput(cmd)}
	}
	runAttacks(t, []attack{
		trust("input redirection from home", "cat < ~/.ssh/id_ed25519"),
		trust("$(< outside)", `echo "$(< %O/o.txt)"`),
		trust("input redirection under the Read deny", "cat < %W/secret/s.txt"),
		{name: "plan mode: input redirection from outside", mode: permissions.ModePlan, tool: "Bash", input: bashInput("cat < %O/o.txt")},
		{name: "plan mode: /dev/tcp", mode: permissions.ModePlan, tool: "Bash", input: bashInput("cat < /dev/tcp/127.0.0.1/9")},
		trust("/dev/tcp", "echo x > /dev/tcp/127.0.0.1/9"),
		trust("relative argument under the Read deny", "cat secret/s.txt"),
		trust("recursive grep over the workspace", "grep -r "+secretText+" ."),
		trust("glob under the Read deny", "head secret/*"),
		trust("a program the analysis does not know", "base64 secret/s.txt"),
		trust("grep -r with no path", "grep -r "+secretText),
		trust("rg with no path", "rg "+secretText),
		trust("recursive grep going up", "grep -r x ./.."),
		trust("~root", "ls -a ~root"),
		trust("a cd that fails leaves the old directory", "cd nothere 2>/dev/null; cat secret/s.txt"),
		trust("cd into the denied directory", "cd secret && cat s.txt"),
		trust("background read of a denied file", "cat secret/s.txt &"),
		{name: "run_in_background read of a denied file", trust: true, tool: "Bash", input: `{"command": "cat secret/s.txt", "run_in_background": true}`},
	})
}

// TestAttacks_bashWritesOutside: every way the issue found to write
// outside the working directory from a command.
func TestAttacks_bashWritesOutside(t *testing.T) {
	t.Parallel()
	trust := func(name, cmd string) attack {
		return attack{name: name, trust: true, tool: "Bash", input: bashInput(cmd)}
	}
	runAttacks(t, []attack{
		trust("$(dirname $PWD)", `echo pwned > "$(dirname "$PWD")/outside/w.txt"`),
		// Each command that would write to home sets HOME to a directory
		// of the fixture first, so a failing test changes nothing real.
		trust("$HOME", `HOME=%R/home; echo pwned > "$HOME/w.txt"`),
		trust("a glob going up", "cp x ../outsid?/"),
		trust("CDPATH", "CDPATH=.. cd outside && echo pwned > w.txt"),
		trust("cdable_vars", "shopt -s cdable_vars; outside=%O; cd outside; echo pwned > w.txt"),
		trust("env -C", "env -C .. touch w.txt"),
		trust("cp -t..", "cp -t.. x"),
		trust("tar -C..", "tar -C.. -cf ../w.tar x"),
		trust("~+/..", "echo pwned > ~+/../w.txt"),
		trust("dd of=", "dd if=x of=../outside/w"),
		trust("mv to /dev/null", "mv x /dev/null"),
		trust("a subshell's cd", "(cd ..) ; echo pwned > w.txt; (cd .. && echo pwned > w.txt)"),
	})
}

// TestAttacks_bashProtected: in bypass mode the Edit deny and protected
// paths hold for every program that writes, and with no settings the
// trusting host does not reach protected paths.
func TestAttacks_bashProtected(t *testing.T) {
	t.Parallel()
	bypass := func(name, cmd string) attack {
		return attack{name: name, mode: permissions.ModeBypassPermissions, tool: "Bash", input: bashInput(cmd)}
	}
	bare := func(name, cmd string) attack {
		return attack{name: name, noRules: true, trust: true, tool: "Bash", input: bashInput(cmd)}
	}
	runAttacks(t, []attack{
		bypass("cp", "cp x protected/f"),
		bypass("mv", "mv x protected/"),
		bypass("install", "install x protected/y"),
		bypass("touch", "touch protected/t"),
		bypass("sed -i", "sed -i s/orig/pwned/ protected/p.txt"),
		bypass("tee", "echo x | tee protected/t"),
		bypass("dd of=", "dd if=x of=protected/d"),
		bypass("ln -sf", "ln -sf /etc/passwd protected/l"),
		bypass("cd then redirect", "cd protected && echo pwned > f"),
		bypass("$PWD", `echo pwned > "$PWD/protected/f"`),
		bypass("a glob", "echo pwned > protecte?/f"),
		bypass("cp into .git/hooks", "cp x .git/hooks/pre-commit"),
		bypass("rm -r of the workspace", "rm -rf ."),
		bypass("find -exec", "find protected -type f -exec rm {} +"),
		bypass("tar -x over the workspace", "tar -xf ../outside/none.tar"),
		bare("git config", "git config core.hooksPath /tmp/h"),
		bare("git config from a subdirectory", "cd src && git config core.hooksPath /tmp/h"),
		bare("tee .claude/settings.json", "echo {} | tee .claude/settings.json"),
		bare("sed -i .mcp.json", "sed -i s/a/b/ .mcp.json"),
		bare("git config --global", "HOME=%R/home git config --global user.name pwned"),
		bare("unknown write target", `echo pwned > "$(echo .git)/config"`),
	})
}

// TestAttacks_bashDenyRm: Bash(rm *) holds however the shell is made to
// run rm.
func TestAttacks_bashDenyRm(t *testing.T) {
	t.Parallel()
	var tests []attack
	for _, cmd := range []string{
		"bash <<'EOF'\nrm x\nEOF", "sh <<< 'rm x'", "echo 'rm x' | sh", "echo 'rm x' | bash /dev/stdin", "echo 'rm x' | bash -s",
		". <(echo rm x)", "trap 'rm x' EXIT", "shopt -s expand_aliases\nalias r=rm\nr x", "hash -p /bin/rm r; r x",
		"env -S 'rm x'", "/usr/bin/env rm x", "/usr/bin/timeout 5 rm x", "/usr/bin/nice rm x", "cat x.sh | bash",
	} {
		tests = append(tests, attack{name: cmd, trust: true, mode: permissions.ModeBypassPermissions, tool: "Bash", input: bashInput(cmd)})
	}
	runAttacks(t, tests)
}

// TestAttacks_searchBelowRoot: Grep, Glob and LS over the workspace run,
// skip what the Read deny covers, and say how much they skipped.
func TestAttacks_searchBelowRoot(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, tool, input, note string }{
		{"grep content", "Grep", `{"pattern": "` + secretText + `|hello", "output_mode": "content"}`, "1 path below the search root skipped"},
		{"grep files", "Grep", `{"pattern": "` + secretText + `"}`, "1 path below the search root skipped"},
		{"glob", "Glob", `{"pattern": "**/*.txt"}`, "1 path below the search root skipped"},
		{"ls", "LS", `{"path": "."}`, "1 entry not listed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newAttackFixture(t, permissions.ModeDefault)
			rs := rules(t, f.ws, attackRules, nil, nil)
			pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := &orchestrator.Pipeline{Pool: pool, Permit: New(Options{Rules: rs, TrustHost: true})}
			out := p.Run(context.Background(), &tools.UseContext{Session: f.sess},
				orchestrator.Call{ID: "1", Name: tt.tool, Input: json.RawMessage(tt.input)}, nil)
			if out.Err != nil || out.Result.IsError {
				t.Fatalf("%v %q", out.Err, out.Result.Text)
			}
			if strings.Contains(out.Result.Text, secretText) || strings.Contains(out.Result.Text, "s.txt") {
				t.Errorf("the result shows the denied file: %q", out.Result.Text)
			}
			if !strings.Contains(out.Result.Text, tt.note) {
				t.Errorf("the result %q does not say %q", out.Result.Text, tt.note)
			}
		})
	}
}

// TestAttacks_cdBetweenDecisionAndCall: a cd landing after the decision
// (here forced by the permitter itself) does not change which file the
// tool opens: Read, Write and Bash use the directory that was judged.
func TestAttacks_cdBetweenDecisionAndCall(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, tool, input, moveTo, mustNotExist string }{
		{"read s.txt after cd secret", "Read", `{"file_path": "s.txt"}`, "secret", ""},
		{"write new after cd protected", "Write", writeInput("new"), "protected", "protected/new"},
		{"write pre-commit after cd .git/hooks", "Write", writeInput("pre-commit"), ".git/hooks", ".git/hooks/pre-commit"},
		{"bash after cd secret", "Bash", bashInput("cat s.txt"), "secret", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newAttackFixture(t, permissions.ModeDefault)
			inner := New(Options{Rules: rules(t, f.ws, attackRules, nil, nil), TrustHost: true})
			racing := orchestrator.PermitterFunc(func(ctx context.Context, req orchestrator.PermissionRequest) permissions.Decision {
				d := inner.Decide(ctx, req)
				req.UC.Session.SetCwd(filepath.Join(f.ws, tt.moveTo))
				return d
			})
			pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := &orchestrator.Pipeline{Pool: pool, Permit: racing}
			out := p.Run(context.Background(), &tools.UseContext{Session: f.sess},
				orchestrator.Call{ID: "1", Name: tt.tool, Input: json.RawMessage(tt.input)}, nil)
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if strings.Contains(out.Result.Text, secretText) {
				t.Errorf("the tool read the denied file: %q", out.Result.Text)
			}
			if tt.mustNotExist != "" {
				if _, err := os.Stat(filepath.Join(f.ws, tt.mustNotExist)); err == nil {
					t.Errorf("%s was written", tt.mustNotExist)
				}
			}
		})
	}
}

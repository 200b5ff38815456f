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
			pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, New(Config{Rules: rs}).Filter())
			if err != nil {
				t.Fatal(err)
			}
			p := &orchestrator.Pipeline{Pool: pool, Permit: New(Config{Rules: rs, TrustHost: tt.trust})}
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

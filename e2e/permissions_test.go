package e2e

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

const secret = "TOPSECRET"

// attackTree makes root/ws (the working directory, with secret/ and
// protected/ and a repository's .git) and root/outside.
func attackTree(t *testing.T) (root, ws string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"ws/secret/s.txt":     secret + "\n",
		"ws/protected/p.txt":  "orig\n",
		"ws/.git/config":      "[core]\n",
		"ws/.git/hooks/.keep": "",
		"ws/x":                "x\n",
		"outside/o.txt":       secret + "-O\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, filepath.Join(root, "ws")
}

// tree records every path under root with its content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		v := d.Type().String()
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			v += string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// refused calls a tool and checks it was refused with no secret shown.
func refused(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	got := testbin.Text(t, res)
	if !res.IsError || !strings.Contains(got, "Permission to use") {
		t.Errorf("%s %v ran: %q", tool, args, got)
	}
	if strings.Contains(got, secret) {
		t.Errorf("%s %v showed a secret: %q", tool, args, got)
	}
}

// TestPermissions_attacks runs a representative set of issue 15's attacks
// against the real binary and checks each is refused with nothing read or
// changed, with the sandbox off and with the sandbox the machine offers:
// the sandbox waives no question these were refused on.
func TestPermissions_attacks(t *testing.T) {
	t.Parallel()
	rules := []string{"--disallowed-tools", "Bash(rm *),Read(./secret/**),Edit(./protected/**)", "--settings", `{"permissions":{"ask":["Bash(touch *)"]}}`}
	for _, tt := range []struct {
		name  string
		args  []string
		calls []map[string]any // each with "tool"
	}{
		{"default mode", rules, []map[string]any{
			{"tool": "Bash", "command": "cat < secret/s.txt"},
			{"tool": "Bash", "command": "cat secret/s.txt"},
			{"tool": "Bash", "command": "grep -r " + secret + " ."},
			{"tool": "Bash", "command": "head secret/*"},
			{"tool": "Bash", "command": "echo 'rm x' | sh"},
			{"tool": "Bash", "command": "bash <<'EOF'\nrm x\nEOF"},
			{"tool": "Bash", "command": "/usr/bin/env rm x"},
			{"tool": "Bash", "command": "cd protected && echo pwned > f"},
			{"tool": "Bash", "command": `echo pwned > "$(dirname "$PWD")/outside/w"`},
			{"tool": "Bash", "command": "env -C .. touch w"},
			{"tool": "Bash", "command": "git config core.hooksPath /tmp/h"},
			{"tool": "Write", "file_path": ".cursor/mcp.json", "content": "{}"},
			// Reads outside the working directories and commands that
			// cannot be analysed, under a Bash deny and a Bash ask rule.
			{"tool": "Bash", "command": "cat < ../outside/o.txt"},
			{"tool": "Bash", "command": "cat ../outside/o.txt"},
			{"tool": "Bash", "command": `echo "$(< ../outside/o.txt)"`},
			{"tool": "Bash", "command": "${X:-rm} x"},
			{"tool": "Bash", "command": "/bin/r? x"},
			{"tool": "Bash", "command": "${X:-touch} ../outside/t"},
		}},
		{"bypass mode", append([]string{"--permission-mode", "bypassPermissions"}, rules...), []map[string]any{
			{"tool": "Bash", "command": "sed -i s/orig/pwned/ protected/p.txt"},
			{"tool": "Bash", "command": "cp x .git/hooks/pre-commit"},
			{"tool": "Bash", "command": "echo pwned > protecte?/f"},
			{"tool": "Bash", "command": `echo pwned > "$PWD/protected/f"`},
		}},
		{"plan mode", []string{"--permission-mode", "plan"}, []map[string]any{
			{"tool": "Bash", "command": "cat < ../outside/o.txt"},
			{"tool": "Bash", "command": "cat < /dev/tcp/127.0.0.1/9"},
		}},
		{"dontAsk with no settings", []string{"--permission-mode", "dontAsk"}, []map[string]any{
			{"tool": "Write", "file_path": "new.txt", "content": "x"},
		}},
	} {
		for _, sb := range []string{"off", "auto"} {
			t.Run(tt.name+"/sandbox "+sb, func(t *testing.T) {
				t.Parallel()
				root, ws := attackTree(t)
				before := tree(t, root)
				// The rules alone must refuse these, with a sandbox or
				// without one (a machine may have no kernel sandbox).
				cs := stdioClient(t, ws, append([]string{"--sandbox", sb}, tt.args...)...)
				for _, c := range tt.calls {
					args := map[string]any{}
					for k, v := range c {
						if k != "tool" {
							args[k] = v
						}
					}
					refused(t, cs, c["tool"].(string), args)
				}
				after := tree(t, root)
				for p, v := range after {
					if before[p] != v {
						t.Errorf("%s changed or appeared", p)
					}
				}
				for p := range before {
					if _, ok := after[p]; !ok {
						t.Errorf("%s disappeared", p)
					}
				}
			})
		}
	}
}

// TestPermissions_grepSkipsDenied: Grep over the workspace runs and skips
// the denied directory.
func TestPermissions_grepSkipsDenied(t *testing.T) {
	t.Parallel()
	_, ws := attackTree(t)
	cs := stdioClient(t, ws, "--disallowed-tools", "Read(./secret/**)")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Grep",
		Arguments: map[string]any{"pattern": secret + "|orig", "output_mode": "content"}})
	if err != nil {
		t.Fatal(err)
	}
	got := testbin.Text(t, res)
	if res.IsError || strings.Contains(got, secret) || !strings.Contains(got, "orig") || !strings.Contains(got, "skipped: a permission deny rule covers") {
		t.Fatalf("Grep: %q", got)
	}
}

// TestPermissions_workspaceTrust: a workspace's own settings cannot turn on
// bypass mode, allow rules or hooks until `agent-mcp trust` (or
// --trust-project); the server says what it ignored.
func TestPermissions_workspaceTrust(t *testing.T) {
	t.Parallel()
	root, ws := attackTree(t)
	marker := filepath.Join(root, "hook-ran")
	settings := `{"permissions": {"defaultMode": "bypassPermissions", "allow": ["Write", "Edit(//**)"], "additionalDirectories": ["` + root + `/outside"]},
		"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "touch ` + marker + `"}]}]}}`
	if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testbin.HermeticEnv(t)
	serve := func(extra ...string) (*mcp.ClientSession, *testbin.Output) {
		cmd := testbin.ServeCmd(t, binary, ws, extra...)
		cmd.Env = env
		stderr := &testbin.Output{}
		cmd.Stderr = stderr
		return testbin.Stdio(t, cmd, nil), stderr
	}

	cs, stderr := serve()
	refused(t, cs, "Write", map[string]any{"file_path": filepath.Join(root, "outside", "w.txt"), "content": "pwned"})
	if _, err := os.Stat(marker); err == nil {
		t.Error("the untrusted workspace's hook ran")
	}
	if _, err := os.Stat(filepath.Join(root, "outside", "w.txt")); err == nil {
		t.Error("the untrusted workspace widened its permissions")
	}
	_ = cs.Close()
	for _, want := range []string{"workspace settings ignored", "defaultMode", "hooks (PreToolUse)", "agent-mcp trust " + ws} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not say %q", stderr.String(), want)
		}
	}

	trust := exec.Command(binary, "trust", ws)
	trust.Env = env
	if out, err := trust.CombinedOutput(); err != nil || !strings.Contains(string(out), "Trusted "+ws) {
		t.Fatalf("agent-mcp trust: %v %s", err, out)
	}
	cs, _ = serve()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Write",
		Arguments: map[string]any{"file_path": filepath.Join(root, "outside", "w.txt"), "content": "trusted"}})
	if err != nil || res.IsError {
		t.Fatalf("after trust the write is refused: %v %q", err, testbin.Text(t, res))
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("after trust the workspace's hook did not run")
	}
}

// TestPermissions_unrelatedRuleKeepsPolicy: one deny rule about something
// else does not make a host's writes inside the workspace ask again.
func TestPermissions_unrelatedRuleKeepsPolicy(t *testing.T) {
	t.Parallel()
	_, ws := attackTree(t)
	cs := stdioClient(t, ws, "--disallowed-tools", "WebFetch")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Write",
		Arguments: map[string]any{"file_path": "new.txt", "content": "ok"}})
	if err != nil || res.IsError {
		t.Fatalf("a write inside asks once an unrelated rule exists: %v %q", err, testbin.Text(t, res))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new.txt")); string(b) != "ok" {
		t.Fatalf("new.txt holds %q", b)
	}
}

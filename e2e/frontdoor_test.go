package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// writeFiles writes each file (path → content), making its directory.
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// envHome is HOME in env.
func envHome(env []string) string {
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	return ""
}

// TestUnknownSettingsKeyAtStart: a misspelt settings key, whose deny rules
// would do nothing, is named on stderr when serve starts, with the key
// that was meant.
func TestUnknownSettingsKeyAtStart(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	writeFiles(t, map[string]string{filepath.Join(proj, ".claude", "settings.json"): `{"permisions": {"deny": ["Bash(rm *)"]}}`})
	cmd := testbin.ServeCmd(t, binary, proj)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // stdin: /dev/null, so serve ends at once
	if err := cmd.Run(); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "unknown key 'permisions', ignored (did you mean 'permissions'?)") {
		t.Errorf("stderr does not name the misspelt key:\n%s", stderr.String())
	}
}

// TestDoctor: doctor reports a misspelt settings key, a host entry whose
// binary is gone, a host entry that works, and starts the upstream MCP
// servers chat would use (here agent-mcp itself) and counts their tools;
// it exits 1 because something failed.
func TestDoctor(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	env := append(testbin.HermeticEnv(t), "CODEX_HOME=", "CLAUDE_CONFIG_DIR=")
	home := envHome(env)
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"self": map[string]any{"command": binary, "args": []string{"serve", "--cwd", proj}}}})
	writeFiles(t, map[string]string{
		filepath.Join(proj, ".claude", "settings.json"): `{"permisions": {"deny": ["Bash(rm *)"]}, "theme": "dark"}`,
		filepath.Join(proj, ".mcp.json"):                string(mcpJSON),
		filepath.Join(home, ".claude.json"):             `{"mcpServers": {"agent-mcp": {"command": "/no/such/agent-mcp", "args": ["serve"]}}}`,
		filepath.Join(home, ".codex", "config.toml"): "[mcp_servers.agent-mcp]\ncommand = \"" + binary + "\"\nargs = [\"serve\"]\n" +
			"[mcp_servers.agent-mcp.env]\nX = \"1\"\n",
	})
	cmd := exec.Command(binary, "doctor", "--cwd", proj)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("doctor: %v, want exit code 1\n%s%s", err, out, stderr.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  FAIL  settings .*settings\.json: unknown key 'permisions', ignored \(did you mean 'permissions'\?\)$`),
		regexp.MustCompile(`(?m)^  FAIL  Claude Code \(` + regexp.QuoteMeta(filepath.Join(home, ".claude.json")) + `\): "agent-mcp" runs /no/such/agent-mcp: cannot be run`),
		regexp.MustCompile(`(?m)^  ok    Codex CLI \(.*config\.toml\): "agent-mcp" runs ` + regexp.QuoteMeta(binary) + ` serve$`),
		regexp.MustCompile(`(?m)^  ok    Claude Code \(project\) \(.*\.mcp\.json\): "self" runs ` + regexp.QuoteMeta(binary) + ` serve --cwd`),
		regexp.MustCompile(`(?m)^  ok    self \(stdio\): connected, 1[5-9] tools$`),
		regexp.MustCompile(`(?m)^sandbox\n  (ok|--)    Bash sandbox: `),
		// What is private by default, one line a row of docs/sandbox.md's table.
		regexp.MustCompile(`(?m)^  (ok|--)    credential paths: (masked|not masked by Landlock alone)`),
		regexp.MustCompile(`(?m)^  (ok|--)    protected names`),
		regexp.MustCompile(`(?m)^  (ok|--)    home: `),
		regexp.MustCompile(`(?m)^  (ok|--)    sandbox\.filesystem\.denyRead: `),
		regexp.MustCompile(`(?m)^  (ok|--)    network: `),
		regexp.MustCompile(`(?m)^  (ok|--)    the host's loopback: `),
		regexp.MustCompile(`(?m)^2 problem\(s\) found$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("doctor's report lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "'theme'") {
		t.Errorf("doctor reports Claude Code's own key theme:\n%s", out)
	}
}

package hosts

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// Codex CLI: `codex exec` against the fake Responses API, configured by a
// config.toml in CODEX_HOME: a custom model provider (wire_api =
// "responses") and agent-mcp as an MCP server over stdio with
// default_tools_approval_mode = "approve", which lets its calls run
// unattended; over HTTP the table gives the url and the bearer token
// header instead of the command. Codex offers an MCP server's tools as a
// namespace (mcp__agent_mcp) and reads resources with its
// read_mcp_resource tool.

func codexName(tool string, input map[string]any) call {
	return call{Namespace: "mcp__agent_mcp", Name: tool, Input: input}
}

func TestCodex_stdio(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	runCodex(t, ws, fmt.Sprintf("command = %s\nargs = [\"serve\", \"--cwd\", %s, \"--state-dir\", %s]\n",
		strconv.Quote(binary), strconv.Quote(ws), strconv.Quote(t.TempDir())))
}

func TestCodex_HTTP(t *testing.T) {
	t.Parallel()
	host(t, "codex") // skip before starting the server
	ws := workspace(t)
	log := newProtocolLog(t, testbin.StartHTTP(t, testbin.ServeCmd(t, binary, ws, "--http", "--addr", "127.0.0.1:0", "--token", "codex-secret")))
	runCodex(t, ws, fmt.Sprintf("url = %s\nhttp_headers = { Authorization = \"Bearer codex-secret\" }\n", strconv.Quote(log.URL)))
	_, seen, inits := log.modern()
	t.Logf("Codex's POSTs by protocol version: %v; initialize requests: %d", seen, inits)
}

// runCodex runs the battery through Codex with agent-mcp configured by
// server (the lines of its [mcp_servers.agent-mcp] table that say how to
// reach it).
func runCodex(t *testing.T, ws, server string) {
	exe, dir := host(t, "codex")
	checks := battery(ws, codexName)
	checks = append(checks, check{"the full 1 MB through the resource",
		func(rs []result) call {
			return call{Name: "read_mcp_resource", Input: map[string]any{"server": "agent-mcp", "uri": lastResourceURI(rs)}}
		},
		func(t *testing.T, r result) {
			// Codex gives the model the resources/read answer as JSON,
			// eliding the middle of a long one: its ends show agent-mcp
			// served the whole output.
			if !strings.Contains(r.Text, `"text":"1\n2\n3\n`) || !strings.HasSuffix(r.Text, `\n158730"}]}`) {
				t.Errorf("read_mcp_resource gave the model %d characters: %.300q ... %q", len(r.Text), r.Text, r.Text[max(0, len(r.Text)-300):])
			}
		}})
	model := newResponses(t, steps(checks)...)

	home, codexHome := t.TempDir(), t.TempDir()
	config := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
approval_policy = "never"

[model_providers.fake]
name = "fake"
base_url = %s
wire_api = "responses"

[mcp_servers.agent-mcp]
%sdefault_tools_approval_mode = "approve"
`, strconv.Quote(model.URL()+"/v1"), server)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := hostEnv(dir, home, "CODEX_HOME="+codexHome)
	out := runHost(t, env, ws, exe, "exec", "--skip-git-repo-check", "Work through the scripted steps.")
	verify(t, checks, model.Results(), 0, out)
}

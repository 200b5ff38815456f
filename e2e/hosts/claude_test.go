package hosts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// Claude Code: `claude -p` against the fake Anthropic API, with agent-mcp
// registered from an --mcp-config file, over stdio and over streamable
// HTTP with a bearer token. --allowedTools mcp__agent-mcp lets its calls
// run unattended; ReadMcpResourceTool (Claude Code's own) reads the
// persisted result. Claude Code defers MCP tools, so the model first loads
// their schemas with ToolSearch "select:".

func claudeName(tool string, input map[string]any) call {
	return call{Name: "mcp__agent-mcp__" + tool, Input: input}
}

func TestClaudeCode_stdio(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	server := map[string]any{"type": "stdio", "command": binary,
		"args": []string{"serve", "--cwd", ws, "--state-dir", t.TempDir()}, "env": map[string]string{}}
	runClaude(t, ws, server)
}

func TestClaudeCode_HTTP(t *testing.T) {
	t.Parallel()
	host(t, "claude") // skip before starting the server
	ws := workspace(t)
	cmd := testbin.ServeCmd(t, binary, ws, "--http", "--addr", "127.0.0.1:0", "--token", "claude-secret")
	log := newProtocolLog(t, testbin.StartHTTP(t, cmd))
	server := map[string]any{"type": "http", "url": log.URL, "headers": map[string]string{"Authorization": "Bearer claude-secret"}}
	runClaude(t, ws, server)
	// Claude Code speaks the newest protocol over HTTP as over stdio: no
	// initialize, every request 2026-07-28, its state kept for its token
	// (the battery's Edit follows a Read, TaskOutput a background Bash).
	ok, seen, inits := log.modern()
	t.Logf("Claude Code's POSTs by protocol version: %v; initialize requests: %d", seen, inits)
	if !ok {
		t.Errorf("Claude Code's POSTs by protocol version: %v, %d initialize requests; want every one 2026-07-28 and none", seen, inits)
	}
}

func runClaude(t *testing.T, ws string, server map[string]any) {
	exe, dir := host(t, "claude")
	checks := battery(ws, claudeName)
	checks = append(checks, check{"the full 1 MB through the resource",
		func(rs []result) call {
			return call{Name: "ReadMcpResourceTool", Input: map[string]any{"server": "agent-mcp", "uri": lastResourceURI(rs)}}
		},
		func(t *testing.T, r result) {
			// Claude Code keeps a result this large in a file of its own
			// and shows the model its preview: the file holds what
			// agent-mcp served, the whole output.
			if r.IsError || !strings.Contains(r.Text, "<persisted-output>") {
				t.Fatalf("ReadMcpResourceTool: %v %.500q", r.IsError, r.Text)
			}
			var read struct {
				Contents []struct{ URI, Text string }
			}
			if err := json.Unmarshal([]byte(savedOutput(t, r.Text)), &read); err != nil || len(read.Contents) != 1 {
				t.Fatalf("Claude Code's saved resource: %v", err)
			}
			text := read.Contents[0].Text
			if !strings.HasPrefix(text, "1\n2\n3\n") || !strings.HasSuffix(text, bigLast) || len(text) != bigSize {
				t.Errorf("the resource holds %d bytes, want the whole output", len(text))
			}
		}})
	var names []string
	for _, tool := range []string{"Read", "Grep", "Glob", "Edit", "Write", "Bash", "TaskOutput"} {
		names = append(names, "mcp__agent-mcp__"+tool)
	}
	toolSearch := fixed(call{Name: "ToolSearch", Input: map[string]any{"query": "select:" + strings.Join(names, ",") + ",ReadMcpResourceTool", "max_results": 10}})
	model := newAnthropic(t, append([]step{toolSearch}, steps(checks)...)...)

	home := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"agent-mcp": server}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := hostEnv(dir, home, "ANTHROPIC_BASE_URL="+model.URL(), "ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	out := runHost(t, env, ws, exe, "-p", "Work through the scripted steps.",
		"--mcp-config", cfg, "--strict-mcp-config",
		"--allowedTools", "mcp__agent-mcp,ReadMcpResourceTool")
	rs := model.Results()
	if len(rs) > 0 && !strings.Contains(string(rs[0].Raw), "tool_reference") {
		t.Errorf("ToolSearch did not load the tools: %s", rs[0].Raw)
	}
	verify(t, checks, rs, 1, out)
}

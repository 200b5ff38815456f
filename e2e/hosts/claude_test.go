package hosts

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// Claude Code: `claude -p` against the fake Anthropic API, with agent-mcp
// registered from an --mcp-config file, over stdio and over streamable
// HTTP with a bearer token. --allowedTools mcp__agent-mcp lets its calls
// run unattended; ReadMcpResourceTool (Claude Code's own) reads the
// persisted result. Claude Code defers MCP tools behind its ToolSearch
// tool unless a tool's _meta says anthropic/alwaysLoad: agent-mcp's core
// tools do, so the model has their schemas from its first request and
// calls them at once; with serve --defer-tools the model first loads
// their schemas with ToolSearch "select:".

func claudeName(tool string, input map[string]any) call {
	return call{Name: "mcp__agent-mcp__" + tool, Input: input}
}

// coreTools are the tools agent-mcp asks hosts to load up front.
var coreTools = []string{"Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "Bash", "TaskOutput"}

// claudeRelease is one Claude Code release the tests run.
type claudeRelease struct{ name, exe string }

// claudeReleases are the pinned Claude Code (node_modules/.bin/claude)
// and the newest release, installed beside it under the npm alias
// claude-code-latest (conformance/run-official.sh install).
func claudeReleases(t *testing.T) []claudeRelease {
	t.Helper()
	exe, dir := host(t, "claude")
	latest := filepath.Join(dir, "node_modules", "claude-code-latest", "bin", "claude.exe")
	if _, err := os.Stat(latest); err != nil {
		t.Fatalf("%s=%s but the newest Claude Code is not installed there (%v): install the hosts with conformance/run-official.sh install", hostsDirEnv, dir, err)
	}
	return []claudeRelease{{"pinned", exe}, {"newest", latest}}
}

func TestClaudeCode_stdio(t *testing.T) {
	t.Parallel()
	for _, rel := range claudeReleases(t) {
		t.Run(rel.name, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t)
			server := map[string]any{"type": "stdio", "command": binary,
				"args": []string{"serve", "--cwd", ws, "--state-dir", t.TempDir()}, "env": map[string]string{}}
			runClaude(t, rel.exe, ws, server, false)
		})
	}
}

// TestClaudeCode_deferred: with serve --defer-tools Claude Code defers
// every agent-mcp tool, and the model loads the ones it needs with
// ToolSearch, as for any MCP server.
func TestClaudeCode_deferred(t *testing.T) {
	t.Parallel()
	for _, rel := range claudeReleases(t) {
		t.Run(rel.name, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t)
			server := map[string]any{"type": "stdio", "command": binary,
				"args": []string{"serve", "--defer-tools", "--cwd", ws, "--state-dir", t.TempDir()}, "env": map[string]string{}}
			runClaude(t, rel.exe, ws, server, true)
		})
	}
}

func TestClaudeCode_HTTP(t *testing.T) {
	t.Parallel()
	exe, _ := host(t, "claude") // skip before starting the server
	ws := workspace(t)
	cmd := testbin.ServeCmd(t, binary, ws, "--http", "--addr", "127.0.0.1:0", "--token", "claude-secret")
	log := newProtocolLog(t, testbin.StartHTTP(t, cmd))
	server := map[string]any{"type": "http", "url": log.URL, "headers": map[string]string{"Authorization": "Bearer claude-secret"}}
	runClaude(t, exe, ws, server, false)
	// Claude Code speaks the newest protocol over HTTP as over stdio: no
	// initialize, every request 2026-07-28, its state kept for its token
	// (the battery's Edit follows a Read, TaskOutput a background Bash).
	ok, seen, inits := log.modern()
	t.Logf("Claude Code's POSTs by protocol version: %v; initialize requests: %d", seen, inits)
	if !ok {
		t.Errorf("Claude Code's POSTs by protocol version: %v, %d initialize requests; want every one 2026-07-28 and none", seen, inits)
	}
}

// TestClaudeCode_long_command_as_task: a Bash command longer than Claude
// Code's own MCP tool-call timeout (MCP_TOOL_TIMEOUT, 3s here) runs to
// completion through agent-mcp as a task, polled with tasks/get, and the
// model receives the command's output, when Claude Code accepts tasks.
// Claude Code's client adds the Tasks extension to its per-request
// capabilities only when its session follows tasks (sessionFollowsTasks)
// or, otherwise, under a feature flag that is on by default only for the
// interactive command line (CLAUDE_CODE_DISABLE_MCP_TASKS turns it off);
// `claude -p`, which these tests drive, declares no extension (2.1.337:
// {"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}} on
// server/discover and on every tools/call). The test skips, saying what
// Claude Code sent, while the newest release does not accept tasks here,
// and checks the whole path once it does.
func TestClaudeCode_long_command_as_task(t *testing.T) {
	t.Parallel()
	rels := claudeReleases(t)
	exe := rels[len(rels)-1].exe
	ws := workspace(t)
	cmd := testbin.ServeCmd(t, binary, ws, "--http", "--addr", "127.0.0.1:0", "--token", "claude-secret", "--task-inline", "1s")
	log := newProtocolLog(t, testbin.StartHTTP(t, cmd))
	server := map[string]any{"type": "http", "url": log.URL, "headers": map[string]string{"Authorization": "Bearer claude-secret"}}
	model := newAnthropic(t, fixed(claudeName("Bash", map[string]any{"command": "sleep 8; echo long command done"})))
	_, dir := host(t, "claude")
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"agent-mcp": server}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := hostEnv(dir, t.TempDir(), "ANTHROPIC_BASE_URL="+model.URL(), "ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "MCP_TOOL_TIMEOUT=3000")
	out := runHost(t, env, ws, exe, "-p", "Work through the scripted steps.",
		"--mcp-config", cfg, "--strict-mcp-config", "--allowedTools", "mcp__agent-mcp")
	methods, accepting := log.tasks()
	t.Logf("Claude Code's POSTs by method: %v; tools/call accepting a task: %d", methods, accepting)
	if accepting == 0 {
		t.Skipf("the newest Claude Code (%s) sent no tools/call that accepts a task: no io.modelcontextprotocol/tasks in the "+
			"per-request capabilities of `claude -p` (its POSTs by method: %v); its client declares the extension only when "+
			"the session follows tasks (sessionFollowsTasks) or a feature flag on by default for the interactive command line "+
			"only says so. Output:\n%s", exe, methods, out)
	}
	rs := model.Results()
	if len(rs) != 1 {
		t.Fatalf("the model got %d tool results, want 1; Claude Code's output:\n%s", len(rs), out)
	}
	wantText(t, rs[0], false, "long command done")
	if methods["tasks/get"] == 0 {
		t.Errorf("the command became no task that Claude Code polled: POSTs by method %v", methods)
	}
}

// runClaude runs the battery through Claude Code exe. deferred: agent-mcp
// was started with --defer-tools, so the model loads the tools with
// ToolSearch first; else the core tools must be offered with their
// schemas from the first request and are called without a search.
func runClaude(t *testing.T, exe, ws string, server map[string]any, deferred bool) {
	_, dir := host(t, "claude")
	checks := battery(ws, claudeName)
	var model *fakeModel
	// ReadMcpResourceTool, Claude Code's own, may be deferred too: the
	// model loads it with ToolSearch when the first request has it so.
	loadResourceTool := check{"ToolSearch loads ReadMcpResourceTool",
		fixed(call{Name: "ToolSearch", Input: map[string]any{"query": "select:ReadMcpResourceTool", "max_results": 1}}),
		func(t *testing.T, r result) {
			if r.IsError {
				t.Errorf("ToolSearch: %.300s", r.Raw)
			}
		}}
	readResource := check{"the full 1 MB through the resource",
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
		}}
	skip := 0
	var script []step
	if deferred {
		var names []string
		for _, tool := range []string{"Read", "Grep", "Glob", "Edit", "Write", "Bash", "TaskOutput"} {
			names = append(names, "mcp__agent-mcp__"+tool)
		}
		script = append(script, fixed(call{Name: "ToolSearch", Input: map[string]any{"query": "select:" + strings.Join(names, ",") + ",ReadMcpResourceTool", "max_results": 10}}))
		skip = 1
		checks = append(checks, readResource)
	} else {
		checks = append(checks, loadResourceTool, readResource)
	}
	script = append(script, steps(checks)...)
	model = newAnthropic(t, script...)

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
	checkOffered(t, model.Offered(), deferred)
	rs := model.Results()
	if deferred && len(rs) > 0 && !strings.Contains(string(rs[0].Raw), "tool_reference") {
		t.Errorf("ToolSearch did not load the tools: %s", rs[0].Raw)
	}
	verify(t, checks, rs, skip, out)
}

// checkOffered checks the tools of Claude Code's first model request:
// agent-mcp's core tools with the input schemas agent-mcp lists (and no
// defer_loading), or, deferred, none of agent-mcp's tools loaded.
func checkOffered(t *testing.T, offered []offeredTool, deferred bool) {
	t.Helper()
	schemas := listedSchemas(t)
	var names []string
	byName := map[string]offeredTool{}
	for _, o := range offered {
		names = append(names, o.Name)
		byName[o.Name] = o
	}
	t.Logf("first request's tools: %v", names)
	if deferred {
		// Claude Code lists deferred tools by name outside the tools
		// array; none of agent-mcp's may be there with its schema.
		for _, o := range offered {
			if bare, ok := strings.CutPrefix(o.Name, "mcp__agent-mcp__"); ok && !o.DeferLoading {
				t.Errorf("with --defer-tools, %s was offered loaded in the first request", bare)
			}
		}
		return
	}
	for _, tool := range coreTools {
		o, ok := byName["mcp__agent-mcp__"+tool]
		if !ok || o.DeferLoading {
			t.Errorf("%s: not offered loaded in the first request (present %v, defer_loading %v)", tool, ok, o.DeferLoading)
			continue
		}
		var got struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(o.InputSchema, &got); err != nil {
			t.Errorf("%s: input_schema %.200s: %v", tool, o.InputSchema, err)
			continue
		}
		want := schemas[tool]
		if !slices.Equal(sortedKeys(got.Properties), want.props) || !slices.Equal(slices.Sorted(slices.Values(got.Required)), want.required) {
			t.Errorf("%s: offered with properties %v required %v, agent-mcp lists %v required %v",
				tool, sortedKeys(got.Properties), got.Required, want.props, want.required)
		}
	}
}

type listedSchema struct{ props, required []string }

// listedSchemas are the input schemas `agent-mcp tools --json` lists:
// each tool's property names and required ones, sorted.
func listedSchemas(t *testing.T) map[string]listedSchema {
	t.Helper()
	out, err := exec.Command(binary, "tools", "--json").Output()
	if err != nil {
		t.Fatalf("agent-mcp tools --json: %v", err)
	}
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("agent-mcp tools --json: %v\n%.500s", err, out)
	}
	m := map[string]listedSchema{}
	for _, l := range list.Tools {
		m[l.Name] = listedSchema{sortedKeys(l.InputSchema.Properties), slices.Sorted(slices.Values(l.InputSchema.Required))}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestClaudeCode_settings_rule_spares_its_question: with
// `permissions.allow: ["mcp__agent-mcp__Read"]` in Claude Code's settings
// (no --allowedTools), Claude Code runs agent-mcp's Read without a
// question of its own (in -p it would refuse it), and still refuses Write,
// which no rule allows: the rule's spelling is the one the README gives.
// The tools/call that reaches agent-mcp carries in its _meta only the
// progress token and Claude Code's tool-use id: nothing says whether the
// user was asked, so agent-mcp cannot skip its own question on that
// ground (docs/permissions.md).
func TestClaudeCode_settings_rule_spares_its_question(t *testing.T) {
	t.Parallel()
	exe, dir := host(t, "claude")
	ws := workspace(t)
	model := newAnthropic(t,
		fixed(claudeName("Read", map[string]any{"file_path": filepath.Join(ws, "a.txt")})),
		fixed(claudeName("Write", map[string]any{"file_path": filepath.Join(ws, "new.txt"), "content": "x\n"})))
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"permissions":{"allow":["mcp__agent-mcp__Read"]}}`
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	// The server's stdin is kept, to see the _meta of each tools/call.
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	server := map[string]any{"type": "stdio", "command": "sh", "args": []string{"-c",
		`tee "$0" | "$1" serve --cwd "$2" --state-dir "$3"`, log, binary, ws, t.TempDir()}, "env": map[string]string{}}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"agent-mcp": server}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := hostEnv(dir, home, "ANTHROPIC_BASE_URL="+model.URL(), "ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	out := runHost(t, env, ws, exe, "-p", "Work through the scripted steps.", "--mcp-config", cfg, "--strict-mcp-config")
	rs := model.Results()
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2:\n%s", len(rs), out)
	}
	if rs[0].IsError || !strings.Contains(rs[0].Text, "alpha") {
		t.Errorf("Read, allowed by the settings rule: %v %.300s", rs[0].IsError, rs[0].Raw)
	}
	if !rs[1].IsError {
		t.Errorf("Write, which no rule allows, ran: %.300s", rs[1].Raw)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Errorf("Write made its file")
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		var req struct {
			Method string
			Params struct {
				Name string
				Meta map[string]any `json:"_meta"`
			}
		}
		if json.Unmarshal([]byte(line), &req) != nil || req.Method != "tools/call" {
			continue
		}
		reached[req.Params.Name]++
		// Protocol 2026-07-28 repeats the client's identity in every
		// request (io.modelcontextprotocol/...); Claude Code adds its
		// tool-use id.
		for k := range req.Params.Meta {
			if k != "progressToken" && k != "claudecode/toolUseId" && !strings.HasPrefix(k, "io.modelcontextprotocol/") {
				t.Errorf("a tools/call's _meta has %q (%v): see whether it says the user was asked (docs/permissions.md)", k, req.Params.Meta[k])
			}
		}
	}
	if reached["Read"] == 0 || reached["Write"] != 0 {
		t.Errorf("tools/call requests that reached agent-mcp: %v, want Read and not Write", reached)
	}
}

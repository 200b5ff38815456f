package upstream

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

func TestMain(m *testing.M) {
	testmodel.RunUpstreamIfAsked()
	os.Exit(m.Run())
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := lookup(map[string]string{"HOME": "/home/u", "EMPTY": ""})
	for _, tc := range []struct {
		name, in, want string
		missing        []string
	}{
		{"plain_variable", "${HOME}/x", "/home/u/x", nil},
		{"default_used_when_unset", "${PORT:-8080}", "8080", nil},
		{"default_used_when_empty", "${EMPTY:-d}", "d", nil},
		{"set_variable_wins_over_default", "${HOME:-/tmp}", "/home/u", nil},
		{"empty_variable_without_default", "a${EMPTY}b", "ab", nil},
		{"unset_without_default_is_reported", "${NOPE}", "", []string{"NOPE"}},
		{"dollar_without_braces_is_kept", "$HOME", "$HOME", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, missing := expand(tc.in, env)
			if got != tc.want || strings.Join(missing, ",") != strings.Join(tc.missing, ",") {
				t.Errorf("expand(%q) = %q, %v; want %q, %v", tc.in, got, missing, tc.want, tc.missing)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	doc := `{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "server-${KIND:-fs}"], "env": {"TOKEN": "${TOKEN}"}},
		"remote": {"type": "http", "url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"legacy": {"type": "sse", "url": "http://localhost:9/sse"},
		"desktop_url": {"url": "http://localhost:9/mcp"},
		"bad_type": {"type": "websocket", "url": "ws://x"},
		"no_command": {"type": "stdio"},
		"needs_var": {"command": "${MISSING}"}
	}}`
	servers, problems, err := parseConfig([]byte(doc), ".mcp.json", lookup(map[string]string{"TOKEN": "t0k", "HOST": "example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ServerConfig{}
	for _, s := range servers {
		got[s.Name] = s
	}
	if s := got["files"]; s.Type != "stdio" || s.Command != "npx" || strings.Join(s.Args, " ") != "-y server-fs" || s.Env["TOKEN"] != "t0k" {
		t.Errorf("files = %+v", s)
	}
	if s := got["remote"]; s.Type != "http" || s.URL != "https://example.com/mcp" || s.Headers["Authorization"] != "Bearer t0k" {
		t.Errorf("remote = %+v", s)
	}
	if s := got["legacy"]; s.Type != "sse" {
		t.Errorf("legacy = %+v", s)
	}
	if s := got["desktop_url"]; s.Type != "http" {
		t.Errorf("desktop_url = %+v", s)
	}
	if len(servers) != 4 {
		t.Errorf("%d servers, want 4", len(servers))
	}
	msgs := ""
	for _, p := range problems {
		msgs += p.Error() + "\n"
	}
	for _, want := range []string{`"bad_type": unknown type "websocket"`, `"no_command": a stdio server needs "command"`, `"needs_var": environment variable MISSING is not set`} {
		if !strings.Contains(msgs, want) {
			t.Errorf("problems %q lack %q", msgs, want)
		}
	}
	if _, _, err := parseConfig([]byte("{"), "x.json", nil); err == nil || !strings.Contains(err.Error(), "x.json") {
		t.Errorf("invalid JSON: err = %v", err)
	}
}

func TestLoad_later_sources_win(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	user := filepath.Join(dir, "user.json")
	os.WriteFile(user, []byte(`{"mcpServers":{"a":{"command":"user-a"},"b":{"command":"user-b"}}}`), 0o600)
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{"a":{"command":"project-a"}}}`), 0o600)
	extra := filepath.Join(dir, "extra.json")
	os.WriteFile(extra, []byte(`{"mcpServers":{"b":{"command":"flag-b"}}}`), 0o600)
	servers, _, err := Load(LoadOptions{ProjectDir: dir, UserConfig: user, Files: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0].Command != "project-a" || servers[1].Command != "flag-b" {
		t.Errorf("servers = %+v", servers)
	}
	strict, _, _ := Load(LoadOptions{ProjectDir: dir, UserConfig: user, Files: []string{extra}, Strict: true})
	if len(strict) != 1 || strict[0].Name != "b" {
		t.Errorf("strict servers = %+v", strict)
	}
	if _, _, err := Load(LoadOptions{Files: []string{filepath.Join(dir, "missing.json")}, Strict: true}); err == nil {
		t.Error("a missing --mcp-config file is not an error")
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	taken := map[string]bool{}
	if got := ToolName("github", "create_issue", taken); got != "mcp__github__create_issue" {
		t.Errorf("plain name = %q", got)
	}
	if got := ToolName("my server", "do.it", taken); got != "mcp__my_server__do_it" {
		t.Errorf("sanitised name = %q", got)
	}
	// A different original that sanitises to the same name stays distinct.
	other := ToolName("my.server", "do it", taken)
	if other == "mcp__my_server__do_it" || !strings.HasPrefix(other, "mcp__my_server__do_it_") {
		t.Errorf("colliding name = %q", other)
	}
	long1 := ToolName("s", strings.Repeat("x", 100)+"1", taken)
	long2 := ToolName("s", strings.Repeat("x", 100)+"2", taken)
	for _, n := range []string{long1, long2, other} {
		if len(n) > maxToolName {
			t.Errorf("%q is %d characters", n, len(n))
		}
		for _, r := range n {
			if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				t.Errorf("%q has %q", n, r)
			}
		}
	}
	if long1 == long2 {
		t.Errorf("two long names cut to the same %q", long1)
	}
}

func TestInputSchema_refs_and_bad_properties(t *testing.T) {
	t.Parallel()
	raw := map[string]any{
		"type":  "object",
		"$defs": map[string]any{"Point": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}}},
		"properties": map[string]any{
			"p":    map[string]any{"$ref": "#/$defs/Point"},
			"name": map[string]any{"type": "string", "description": "a name"},
			"odd":  map[string]any{"$ref": "https://example.com/elsewhere.json", "description": "remote"},
		},
		"required": []any{"name"},
	}
	s := inputSchema(raw)
	tool := adapt(&server{cfg: ServerConfig{Name: "x"}}, "mcp__x__t", &mcp.Tool{Name: "t", InputSchema: raw})
	if _, err := orchestrator.AssemblePool(nil, []*tools.Tool{tool}, nil); err != nil {
		t.Fatalf("the pool refuses the adapted schema: %v", err)
	}
	if s.Properties["p"].Type != "object" || s.Properties["p"].Properties["x"].Type != "integer" {
		t.Errorf("$ref not inlined: %+v", s.Properties["p"])
	}
	if s.Properties["odd"].Description != "remote" {
		t.Errorf("unresolvable property lost its description: %+v", s.Properties["odd"])
	}
	if got := inputSchema(nil); got.Type != "object" || got.Properties == nil {
		t.Errorf("nil schema = %+v", got)
	}
}

func TestManager_transports(t *testing.T) {
	t.Parallel()
	cmd, args, env := testmodel.UpstreamStdio()
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) ServerConfig
	}{
		{"stdio", func(t *testing.T) ServerConfig {
			return ServerConfig{Name: "s", Type: "stdio", Command: cmd, Args: args, Env: env}
		}},
		{"streamable_http", func(t *testing.T) ServerConfig {
			return ServerConfig{Name: "s", Type: "http", URL: testmodel.NewUpstreamHTTP(t), Headers: map[string]string{"X-Test": "1"}}
		}},
		{"sse", func(t *testing.T) ServerConfig {
			return ServerConfig{Name: "s", Type: "sse", URL: testmodel.NewUpstreamSSE(t)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Start(context.Background(), []ServerConfig{tc.cfg(t)}, Options{ConnectTimeout: 20 * time.Second})
			defer m.Close()
			if st := m.Status(); len(st) != 1 || st[0].State != Connected || st[0].Tools != 6 {
				t.Fatalf("status = %+v", st)
			}
			var echo, add *tools.Tool
			for _, tl := range m.Tools() {
				switch tl.Name {
				case "mcp__s__echo":
					echo = tl
				case "mcp__s__add":
					add = tl
				}
			}
			if echo == nil || add == nil {
				t.Fatalf("tools = %v", m.Tools())
			}
			in, _ := echo.Decode(json.RawMessage(`{"text":"yo"}`))
			ain, _ := add.Decode(json.RawMessage(`{"a":1,"b":2}`))
			if !in.ConcurrencySafe() || !in.ReadOnly() || ain.ConcurrencySafe() || !ain.Destructive() {
				t.Error("annotations: echo must be read-only and safe, add neither and destructive")
			}
			if !echo.ReadOnly || echo.Destructive() || add.ReadOnly || !add.Destructive() || echo.Upstream != "s" {
				t.Errorf("fixed facts: echo must be read-only, add destructive, both from server s (Upstream %q)", echo.Upstream)
			}
			res, err := in.Call(context.Background(), &tools.UseContext{}, nil)
			if err != nil || res.Text != "echo: yo" || res.IsError {
				t.Errorf("echo = %+v, %v", res, err)
			}
			res, err = ain.Call(context.Background(), &tools.UseContext{}, nil)
			if err != nil || res.Text != `{"sum":3}` || res.Output == nil {
				t.Errorf("add = %+v, %v", res, err)
			}
		})
	}
}

func TestManager_call_timeout_and_unreachable(t *testing.T) {
	t.Parallel()
	url := testmodel.NewUpstreamHTTP(t)
	m := Start(context.Background(), []ServerConfig{
		{Name: "s", Type: "http", URL: url},
		{Name: "gone", Type: "http", URL: "http://127.0.0.1:1/mcp"},
	}, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 200 * time.Millisecond})
	defer m.Close()
	var slow *tools.Tool
	for _, tl := range m.Tools() {
		if tl.Name == "mcp__s__slow" {
			slow = tl
		}
	}
	if slow == nil {
		t.Fatal("no slow tool")
	}
	in, _ := slow.Decode(json.RawMessage(`{"ms":5000}`))
	_, err := in.Call(context.Background(), &tools.UseContext{}, nil)
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("err = %v, want the call timeout", err)
	}
	st := m.Status()
	if st[0].Name != "gone" || st[0].State != Failed || !strings.Contains(st[0].Error, "127.0.0.1:1") {
		t.Errorf("status = %+v", st)
	}
}

var _ = mcp.Implementation{}

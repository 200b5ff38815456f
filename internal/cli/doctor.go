package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator/upstream"
)

// errDoctorFound is doctor's error when a check failed: the report has
// said what, so nothing more is printed.
var errDoctorFound = doctorError{}

type doctorError struct{}

func (doctorError) Error() string { return "" }
func (doctorError) ExitCode() int { return 1 }

// doctorReport prints doctor's sections: a heading, then one line per
// check, marked ok, FAIL or -- (nothing to check).
type doctorReport struct {
	w      io.Writer
	failed int
}

func (r *doctorReport) section(name string) { fmt.Fprintf(r.w, "%s\n", name) }
func (r *doctorReport) ok(format string, a ...any) {
	fmt.Fprintf(r.w, "  ok    %s\n", fmt.Sprintf(format, a...))
}
func (r *doctorReport) none(format string, a ...any) {
	fmt.Fprintf(r.w, "  --    %s\n", fmt.Sprintf(format, a...))
}
func (r *doctorReport) fail(format string, a ...any) {
	r.failed++
	fmt.Fprintf(r.w, "  FAIL  %s\n", fmt.Sprintf(format, a...))
}

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", "doctor [flags]",
		"Checks what agent-mcp depends on and says what is wrong: the settings files (unknown keys\n"+
			"and the closest known one), Bash's sandbox on this machine, each host's config file\n"+
			"(an agent-mcp entry whose binary is missing or was built by `go run`), and chat's\n"+
			"upstream MCP servers (each is started and its tools listed). Exits 1 when a check fails.", stdout, stderr)
	var w workspaceFlags
	w.add(fs.FlagSet)
	var mcpConfigs stringList
	fs.Var(&mcpConfigs, "mcp-config", "a further upstream MCP server config file, as chat takes it (repeatable)")
	connect := fs.Duration("mcp-connect-timeout", 10*time.Second, "how long an upstream MCP server may take to start and list its tools")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	project := w.cwd
	if project == "" {
		project, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(project); err == nil {
		project = abs
	}
	r := &doctorReport{w: stdout}
	exe, _ := os.Executable()
	fmt.Fprintf(stdout, "agent-mcp %s (%s), project %s\n", version(), exe, project)

	r.section("settings")
	perm, err := w.permissionSetup(project)
	if err != nil {
		r.fail("%v", err)
	} else {
		if len(perm.settings.Sources) == 0 {
			r.none("no settings file found")
		}
		for _, src := range perm.settings.Sources {
			r.ok("read %s", src)
		}
		for _, msg := range perm.settings.Unknown {
			r.fail("%s", msg)
		}
		for _, msg := range perm.settings.Ignored {
			r.none("workspace settings ignored: %s", msg)
		}
	}

	r.section("sandbox")
	if perm != nil {
		sb := perm.sandbox
		if sb == nil || !sb.Layers().Any() {
			r.none("Bash %s (`agent-mcp sandbox check` says why and runs a self-test)", sb.Describe())
		} else {
			r.ok("Bash %s", sb.Describe())
			if guard, why := sb.FileGuard(); guard {
				r.ok("protected names (.envrc, .mcp.json, .claude/, a nested .git's hooks) refused as a command makes them, at any depth of a working directory")
			} else {
				r.none("protected names a command makes are moved aside after the fact, and deeper ones only as the Write tool refuses them (%s)", why)
			}
		}
		r.ok("%s", envLine(os.Environ(), perm.settings.Sandbox.EnvAllow))
		for _, row := range privateRows(sb) {
			if row.held {
				r.ok("%s", row.line)
			} else {
				r.none("%s", row.line)
			}
		}
		r.ok("%s", redactLine(os.Environ(), perm.settings.Sandbox.EnvAllow))
		for _, l := range credentialLines(perm.settings, os.Environ()) {
			r.ok("%s", l)
		}
	}

	r.section("hosts")
	home, _ := os.UserHomeDir()
	seen := 0
	for _, h := range hostConfigs(home, project) {
		if checkHost(r, h) {
			seen++
		}
	}
	if seen == 0 {
		r.none("no host config file found (Claude Code's ~/.claude.json and .mcp.json, Codex CLI's ~/.codex/config.toml, Gemini CLI's, Cursor's, VS Code's, Claude Desktop's)")
	}

	r.section("upstream MCP servers (chat)")
	cfgs, warnings, err := upstream.Load(upstream.LoadOptions{ProjectDir: project, Files: mcpConfigs})
	if err != nil {
		r.fail("%v", err)
	}
	for _, wr := range warnings {
		r.fail("%v", wr)
	}
	if len(cfgs) == 0 && err == nil {
		r.none("none configured (the project's .mcp.json, agent-mcp/mcp.json in the user config directory, --mcp-config)")
	}
	if len(cfgs) > 0 {
		m := upstream.Start(ctx, cfgs, upstream.Options{ConnectTimeout: *connect, ClientName: "agent-mcp", ClientVersion: version(),
			Logger: slog.New(slog.DiscardHandler)})
		for _, st := range m.Status() {
			if st.State == upstream.Connected {
				r.ok("%s (%s): connected, %d tools", st.Name, st.Type, st.Tools)
			} else {
				r.fail("%s (%s): %s: %s", st.Name, st.Type, st.State, st.Error)
			}
		}
		m.Close()
	}
	if r.failed > 0 {
		fmt.Fprintf(stdout, "%d problem(s) found\n", r.failed)
		return errDoctorFound
	}
	fmt.Fprintln(stdout, "no problems found")
	return nil
}

// hostConfig is one host's config file that may register agent-mcp.
type hostConfig struct {
	host, path string
	// key is the JSON key holding the servers ("mcpServers", VS Code's
	// "servers"); "toml" for Codex's config.toml. Claude Code's
	// ~/.claude.json also holds servers per project (projects[dir]).
	key string
}

// hostConfigs are the config files of the hosts the README names, user
// and project ones.
func hostConfigs(home, project string) []hostConfig {
	var out []hostConfig
	claudeDir := home
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		claudeDir = d
	}
	codexDir := filepath.Join(home, ".codex")
	if d := os.Getenv("CODEX_HOME"); d != "" {
		codexDir = d
	}
	out = append(out,
		hostConfig{"Claude Code", filepath.Join(claudeDir, ".claude.json"), "mcpServers"},
		hostConfig{"Claude Code (project)", filepath.Join(project, ".mcp.json"), "mcpServers"},
		hostConfig{"Codex CLI", filepath.Join(codexDir, "config.toml"), "toml"},
		hostConfig{"Gemini CLI", filepath.Join(home, ".gemini", "settings.json"), "mcpServers"},
		hostConfig{"Gemini CLI (project)", filepath.Join(project, ".gemini", "settings.json"), "mcpServers"},
		hostConfig{"Cursor", filepath.Join(home, ".cursor", "mcp.json"), "mcpServers"},
		hostConfig{"Cursor (project)", filepath.Join(project, ".cursor", "mcp.json"), "mcpServers"},
		hostConfig{"VS Code (project)", filepath.Join(project, ".vscode", "mcp.json"), "servers"},
	)
	if dir, err := os.UserConfigDir(); err == nil {
		out = append(out, hostConfig{"Claude Desktop", filepath.Join(dir, "Claude", "claude_desktop_config.json"), "mcpServers"})
	}
	return out
}

// hostEntry is one server entry of a host's config.
type hostEntry struct {
	name, command, url string
	args               []string
}

// checkHost reports the agent-mcp entries of one host config file;
// false when the file does not exist.
func checkHost(r *doctorReport, h hostConfig) bool {
	data, err := os.ReadFile(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		r.fail("%s (%s): %v", h.host, h.path, err)
		return true
	}
	var entries []hostEntry
	if h.key == "toml" {
		entries = codexEntries(data)
	} else if entries, err = jsonEntries(data, h.key); err != nil {
		r.fail("%s (%s): not valid JSON: %v", h.host, h.path, err)
		return true
	}
	found := false
	for _, e := range entries {
		if !isAgentMCP(e) {
			continue
		}
		found = true
		where := fmt.Sprintf("%s (%s): %q", h.host, h.path, e.name)
		if e.url != "" {
			r.ok("%s: over HTTP at %s", where, e.url)
			continue
		}
		if problem := commandProblem(e); problem != "" {
			r.fail("%s runs %s: %s", where, e.command, problem)
			continue
		}
		r.ok("%s runs %s %s", where, e.command, strings.Join(e.args, " "))
	}
	if !found {
		r.none("%s (%s): no agent-mcp entry", h.host, h.path)
	}
	return true
}

// isAgentMCP reports whether an entry is agent-mcp's: named so, or
// running a binary named so.
func isAgentMCP(e hostEntry) bool {
	return strings.Contains(e.name, "agent-mcp") || strings.HasPrefix(filepath.Base(e.command), "agent-mcp")
}

// commandProblem says what keeps a host from starting the entry's
// command, or "".
func commandProblem(e hostEntry) string {
	if e.command == "" {
		return "no command"
	}
	path, err := exec.LookPath(e.command)
	if err != nil {
		return fmt.Sprintf("cannot be run (%v): build it with `go build -o agent-mcp .` and give its absolute path", err)
	}
	if tmp, cache := goBuildDirs(); builtByGoRun(path, tmp, cache) {
		return "a binary `go run` built, which Go deletes: build one with `go build -o agent-mcp .` and give its absolute path"
	}
	if !slices.Contains(e.args, "serve") {
		return fmt.Sprintf("its arguments %q lack the serve command", e.args)
	}
	return ""
}

// jsonEntries reads the servers under key of a host's JSON config, and,
// for Claude Code's ~/.claude.json, those of every project.
func jsonEntries(data []byte, key string) ([]hostEntry, error) {
	type server struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		URL     string   `json:"url"`
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []hostEntry
	add := func(raw json.RawMessage, prefix string) {
		var servers map[string]server
		if json.Unmarshal(raw, &servers) != nil {
			return
		}
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			s := servers[name]
			out = append(out, hostEntry{name: prefix + name, command: s.Command, args: s.Args, url: s.URL})
		}
	}
	add(doc[key], "")
	var projects map[string]struct {
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	if raw, ok := doc["projects"]; ok && json.Unmarshal(raw, &projects) == nil {
		for _, dir := range slices.Sorted(maps.Keys(projects)) {
			add(projects[dir].MCPServers, dir+": ")
		}
	}
	return out, nil
}

// codexEntries reads the [mcp_servers.NAME] tables of Codex CLI's
// config.toml: their command, args and url, written as strings and
// arrays of strings on one line each, as Codex writes them.
func codexEntries(data []byte) []hostEntry {
	var out []hostEntry
	var cur *hostEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			cur = nil
			name, ok := strings.CutPrefix(strings.Trim(line, "[]"), "mcp_servers.")
			// [mcp_servers.NAME], not a subtable such as [mcp_servers.NAME.env].
			if ok && (!strings.Contains(name, ".") || strings.HasPrefix(name, `"`)) {
				out = append(out, hostEntry{name: strings.Trim(name, `"`)})
				cur = &out[len(out)-1]
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if cur == nil || !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "command":
			cur.command, _ = strconv.Unquote(v)
		case "url":
			cur.url, _ = strconv.Unquote(v)
		case "args":
			_ = json.Unmarshal([]byte(v), &cur.args)
		}
	}
	return out
}

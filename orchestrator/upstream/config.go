package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// ServerConfig describes one upstream MCP server.
type ServerConfig struct {
	// Name is the server's key in mcpServers; tool names carry it.
	Name string
	// Type is "stdio", "http" (streamable HTTP) or "sse".
	Type string
	// Command, Args and Env start a stdio server.
	Command string
	Args    []string
	Env     map[string]string
	// URL and Headers reach an HTTP or SSE server.
	URL     string
	Headers map[string]string
	// Source is the file the server was configured in.
	Source string
}

// rawServer is one mcpServers entry as written: the .mcp.json shape and the
// Claude Desktop shape (no "type", a "command" or a "url").
type rawServer struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
}

// parseConfig reads an mcpServers document (.mcp.json, a Claude Desktop
// config, agent-mcp's user config). ${VAR} and ${VAR:-default} expand in
// command, args, env, url and headers. A server whose entry is unusable is
// left out and reported in problems; err is set only when the document
// itself cannot be read.
func parseConfig(data []byte, source string, lookup func(string) (string, bool)) (servers []ServerConfig, problems []error, err error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: not a valid MCP server config: %w", source, err)
	}
	names := make([]string, 0, len(doc.MCPServers))
	for n := range doc.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var r rawServer
		if err := json.Unmarshal(doc.MCPServers[name], &r); err != nil {
			problems = append(problems, fmt.Errorf("%s: server %q: %w", source, name, err))
			continue
		}
		sc, err := r.resolve(name, source, lookup)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		servers = append(servers, sc)
	}
	return servers, problems, nil
}

func (r rawServer) resolve(name, source string, lookup func(string) (string, bool)) (ServerConfig, error) {
	fail := func(format string, args ...any) (ServerConfig, error) {
		return ServerConfig{}, fmt.Errorf("%s: server %q: %s", source, name, fmt.Sprintf(format, args...))
	}
	if name == "" {
		return fail("the server name is empty")
	}
	typ := strings.ToLower(firstOf(r.Type, r.Transport))
	switch typ {
	case "":
		if r.URL != "" && r.Command == "" {
			typ = "http"
		} else {
			typ = "stdio"
		}
	case "streamable-http", "streamablehttp", "streamable_http":
		typ = "http"
	case "stdio", "http", "sse":
	default:
		return fail("unknown type %q: expected stdio, http or sse", r.Type)
	}
	var missing []string
	ex := func(s string) string {
		out, miss := expand(s, lookup)
		missing = append(missing, miss...)
		return out
	}
	sc := ServerConfig{Name: name, Type: typ, Source: source}
	switch typ {
	case "stdio":
		if r.Command == "" {
			return fail(`a stdio server needs "command"`)
		}
		sc.Command = ex(r.Command)
		for _, a := range r.Args {
			sc.Args = append(sc.Args, ex(a))
		}
		if len(r.Env) > 0 {
			sc.Env = map[string]string{}
			for k, v := range r.Env {
				sc.Env[k] = ex(v)
			}
		}
	default:
		if r.URL == "" {
			return fail(`an %s server needs "url"`, typ)
		}
		sc.URL = ex(r.URL)
		if len(r.Headers) > 0 {
			sc.Headers = map[string]string{}
			for k, v := range r.Headers {
				sc.Headers[k] = ex(v)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fail("environment variable %s is not set and has no default (write ${VAR:-default} to give one)",
			strings.Join(slices.Compact(missing), ", "))
	}
	return sc, nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default} in s. It returns the names of
// variables that were unset and had no default.
func expand(s string, lookup func(string) (string, bool)) (string, []string) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		if v, ok := lookup(sub[1]); ok && v != "" {
			return v
		}
		if sub[2] != "" {
			return sub[3]
		}
		if v, ok := lookup(sub[1]); ok {
			return v
		}
		missing = append(missing, sub[1])
		return ""
	})
	return out, missing
}

// LoadOptions say where to look for server configs.
type LoadOptions struct {
	// ProjectDir holds the project's .mcp.json.
	ProjectDir string
	// UserConfig is agent-mcp's user config file (an mcpServers
	// document); empty means userConfigPath().
	UserConfig string
	// Files are further config files (--mcp-config), in order.
	Files []string
	// Strict uses only Files.
	Strict bool
	// Lookup reads the environment; nil means os.LookupEnv.
	Lookup func(string) (string, bool)
	// ProjectFilter, when set, decides which servers of the project's
	// .mcp.json may start (a cloned repository's file is not the
	// operator's: see workspace trust); nil lets all of them.
	ProjectFilter func([]ServerConfig) []ServerConfig
}

// userConfigPath is agent-mcp's user-level server config:
// $XDG_CONFIG_HOME/agent-mcp/mcp.json (~/.config/agent-mcp/mcp.json).
func userConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "agent-mcp", "mcp.json")
}

// Load gathers servers from the user config, the project's .mcp.json and
// the given files; a later source replaces an earlier server of the same
// name. Missing user and project files are fine; a missing or invalid file
// named in Files is an error. Problems with single servers come back as
// warnings.
func Load(opts LoadOptions) ([]ServerConfig, []error, error) {
	type src struct {
		path     string
		required bool
		project  bool
	}
	var srcs []src
	if !opts.Strict {
		user := opts.UserConfig
		if user == "" {
			user = userConfigPath()
		}
		if user != "" {
			srcs = append(srcs, src{user, false, false})
		}
		if opts.ProjectDir != "" {
			srcs = append(srcs, src{filepath.Join(opts.ProjectDir, ".mcp.json"), false, true})
		}
	}
	for _, f := range opts.Files {
		srcs = append(srcs, src{f, true, false})
	}
	byName := map[string]ServerConfig{}
	var warnings []error
	for _, s := range srcs {
		data, err := os.ReadFile(s.path)
		if err != nil {
			if !s.required && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, warnings, fmt.Errorf("reading MCP config: %w", err)
		}
		servers, problems, err := parseConfig(data, s.path, opts.Lookup)
		if err != nil {
			if s.required {
				return nil, warnings, err
			}
			warnings = append(warnings, err)
			continue
		}
		warnings = append(warnings, problems...)
		if s.project && opts.ProjectFilter != nil && len(servers) > 0 {
			servers = opts.ProjectFilter(servers)
		}
		for _, sc := range servers {
			byName[sc.Name] = sc
		}
	}
	out := make([]ServerConfig, 0, len(byName))
	for _, sc := range byName {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, warnings, nil
}

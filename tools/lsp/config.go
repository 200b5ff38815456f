package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ServerConfig is one language server, configured as Claude Code
// configures one (an entry of `lspServers` in settings, or of a project's
// .lsp.json), or one of the built-in defaults found on PATH.
type ServerConfig struct {
	// Name is the entry's key ("go", "python", ...).
	Name string `json:"-"`
	// Command is the executable, looked up on PATH when it has no slash.
	Command string `json:"command"`
	// Args follow the command.
	Args []string `json:"args,omitempty"`
	// ExtensionToLanguage maps a file extension (".go") to the language
	// identifier sent to the server ("go").
	ExtensionToLanguage map[string]string `json:"extensionToLanguage"`
	// Env are variables added to the server's environment.
	Env map[string]string `json:"env,omitempty"`
	// InitializationOptions are sent with initialize.
	InitializationOptions json.RawMessage `json:"initializationOptions,omitempty"`
	// Settings answer the server's workspace/configuration requests,
	// looked up by section ("gopls", "python.analysis").
	Settings json.RawMessage `json:"settings,omitempty"`
	// WritesWorkspace lets the server write in the working directories
	// when it runs in Bash's sandbox (rust-analyzer's cargo check writes
	// target/). Without it the server reads the tree and writes only its
	// caches, so nothing it does can plant a protected name, and the
	// user's own new files (an .envrc, a cloned repository) are not
	// taken for its work while it runs.
	WritesWorkspace bool `json:"writesWorkspace,omitempty"`
	// Transport must be "stdio" (or empty): the only one supported.
	Transport string `json:"transport,omitempty"`
	// RootMarkers are files whose directory is a workspace root for this
	// server (go.mod); the nearest one above a file wins. Built-in
	// defaults have them; configured servers use the working directory.
	RootMarkers []string `json:"-"`
	// Source says where the entry came from: "default", a settings file,
	// or a .lsp.json.
	Source string `json:"-"`
	// Path is where Command was found on PATH ("" when it was not).
	Path string `json:"-"`
}

// knownKeys are the keys of an entry this client reads; Claude Code's
// others are accepted and ignored.
var knownKeys = []string{"command", "args", "extensionToLanguage", "env", "initializationOptions", "settings", "transport", "writesWorkspace",
	"workspaceFolder", "startupTimeout", "shutdownTimeout", "restartOnCrash", "maxRestarts"}

// ParseServers reads the entries of an `lspServers` object (or a
// .lsp.json file's top level) from source, each checked: a command, at
// least one extension (starting with a dot) mapped to a language, and
// stdio transport.
func ParseServers(source string, raw map[string]json.RawMessage) ([]ServerConfig, error) {
	var out []ServerConfig
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		where := fmt.Sprintf("%s: lspServers.%s", source, name)
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw[name], &keys); err != nil {
			return nil, fmt.Errorf("%s: want an object with command and extensionToLanguage: %w", where, err)
		}
		for k := range keys {
			if !slices.Contains(knownKeys, k) {
				return nil, fmt.Errorf("%s: unknown key %q (known: %s)", where, k, strings.Join(knownKeys, ", "))
			}
		}
		var c ServerConfig
		dec := json.NewDecoder(bytes.NewReader(raw[name]))
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		c.Name, c.Source = name, source
		if strings.TrimSpace(c.Command) == "" {
			return nil, fmt.Errorf("%s.command: must name the server's executable, such as \"gopls\"", where)
		}
		if len(c.ExtensionToLanguage) == 0 {
			return nil, fmt.Errorf("%s.extensionToLanguage: must map at least one file extension to a language, such as {\".go\": \"go\"}", where)
		}
		for ext, lang := range c.ExtensionToLanguage {
			if !strings.HasPrefix(ext, ".") || len(ext) < 2 || lang == "" {
				return nil, fmt.Errorf("%s.extensionToLanguage: %q: %q: want an extension with its dot (\".py\") and a language identifier (\"python\")", where, ext, lang)
			}
		}
		if c.Transport != "" && c.Transport != "stdio" {
			return nil, fmt.Errorf("%s.transport: %q is not supported: only \"stdio\"", where, c.Transport)
		}
		out = append(out, c)
	}
	return out, nil
}

// ReadProjectFile reads dir/.lsp.json; a missing file gives nothing.
func ReadProjectFile(dir string) ([]ServerConfig, error) {
	p := filepath.Join(dir, ".lsp.json")
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of language servers: %w", p, err)
	}
	// Claude Code's plugin form nests the same object under lspServers.
	if inner, ok := raw["lspServers"]; ok && len(raw) == 1 {
		raw = nil
		if err := json.Unmarshal(inner, &raw); err != nil {
			return nil, fmt.Errorf("%s: lspServers: not a JSON object of language servers: %w", p, err)
		}
	}
	return ParseServers(p, raw)
}

// Defaults are the built-in servers, used when their command is on PATH:
// gopls, typescript-language-server, pyright-langserver or
// basedpyright-langserver, rust-analyzer and clangd.
func Defaults() []ServerConfig {
	ts := map[string]string{".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
		".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"}
	py := map[string]string{".py": "python", ".pyi": "python"}
	pyMarkers := []string{"pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"}
	return []ServerConfig{
		{Name: "go", Command: "gopls", Args: []string{"serve"}, ExtensionToLanguage: map[string]string{".go": "go"},
			RootMarkers: []string{"go.work", "go.mod"}},
		{Name: "typescript", Command: "typescript-language-server", Args: []string{"--stdio"}, ExtensionToLanguage: ts,
			RootMarkers: []string{"tsconfig.json", "jsconfig.json", "package.json"}},
		{Name: "python", Command: "pyright-langserver", Args: []string{"--stdio"}, ExtensionToLanguage: py, RootMarkers: pyMarkers},
		{Name: "python", Command: "basedpyright-langserver", Args: []string{"--stdio"}, ExtensionToLanguage: py, RootMarkers: pyMarkers},
		{Name: "rust", Command: "rust-analyzer", ExtensionToLanguage: map[string]string{".rs": "rust"},
			RootMarkers: []string{"Cargo.toml"}, WritesWorkspace: true},
		{Name: "c", Command: "clangd", ExtensionToLanguage: map[string]string{".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
			".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp"},
			RootMarkers: []string{"compile_commands.json", "compile_flags.txt", ".clangd"}},
	}
}

// Resolve picks the servers in effect: the built-in defaults whose
// command lookPath finds (the first of each name), then configured
// entries in order, a later one replacing an earlier one of the same
// name. A configured server's command is looked up too; Path stays empty
// when it is missing (the server is listed as not found and not used).
// lookPath is exec.LookPath in the product.
func Resolve(configured []ServerConfig, defaults bool, lookPath func(string) (string, error)) []ServerConfig {
	var out []ServerConfig
	index := map[string]int{}
	put := func(c ServerConfig) {
		if i, ok := index[c.Name]; ok {
			out[i] = c
			return
		}
		index[c.Name] = len(out)
		out = append(out, c)
	}
	if defaults {
		for _, d := range Defaults() {
			if _, ok := index[d.Name]; ok {
				continue
			}
			if p, err := lookPath(d.Command); err == nil {
				d.Path, d.Source = p, "default"
				put(d)
			}
		}
	}
	for _, c := range configured {
		if p, err := lookPath(c.Command); err == nil {
			c.Path = p
		}
		put(c)
	}
	return out
}

// LookPath is exec.LookPath.
func LookPath(name string) (string, error) { return exec.LookPath(name) }

// Describe words a server for `agent-mcp tools` and `sandbox check`: its
// name, command, extensions and where it came from.
func (c ServerConfig) Describe() string {
	exts := make([]string, 0, len(c.ExtensionToLanguage))
	for e := range c.ExtensionToLanguage {
		exts = append(exts, e)
	}
	sort.Strings(exts)
	where := c.Path
	if where == "" {
		where = "not found on PATH"
	}
	return fmt.Sprintf("%s: %s (%s) for %s [%s]", c.Name, strings.Join(append([]string{c.Command}, c.Args...), " "), where, strings.Join(exts, " "), c.Source)
}

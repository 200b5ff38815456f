package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/permissions"
)

// File is the part of a Claude Code settings file agent-mcp reads. Other
// keys are ignored, so the same files serve both programs.
type File struct {
	Permissions struct {
		Allow                 []string `json:"allow"`
		Ask                   []string `json:"ask"`
		Deny                  []string `json:"deny"`
		DefaultMode           string   `json:"defaultMode"`
		AdditionalDirectories []string `json:"additionalDirectories"`
	} `json:"permissions"`
	// Model is the chat model (`provider/name`, or a bare Anthropic name).
	Model string `json:"model"`
	// Hooks maps an event name to its matchers; only PreToolUse and
	// PostToolUse are read, so other events may have any shape.
	Hooks map[string]json.RawMessage `json:"hooks"`
	// Sandbox is Claude Code's sandbox object, where its keys map.
	Sandbox *SandboxFile `json:"sandbox"`
	// LSPServers are Claude Code's language servers, by name (package
	// tools/lsp reads each entry).
	LSPServers map[string]json.RawMessage `json:"lspServers"`
	// LSPDiagnosticsWaitMs bounds the wait for a language server's
	// diagnostics after a change, in milliseconds (agent-mcp's own key).
	LSPDiagnosticsWaitMs *int `json:"lspDiagnosticsWaitMs"`
	// Redact names further secrets to redact from every tool result
	// (agent-mcp's own key).
	Redact *RedactFile `json:"redact"`
}

// RedactFile is the "redact" object: values, the variables whose values
// are secret, and regular expressions whose matches (group 1 where they
// have one) are.
type RedactFile struct {
	Values   []string `json:"values"`
	EnvVars  []string `json:"envVars"`
	Patterns []string `json:"patterns"`
}

// RedactPattern is one redact.patterns entry, compiled, named as its
// key.
type RedactPattern struct {
	Name string
	Re   *regexp.Regexp
}

// HookMatcher is one entry of a hook event's list (docs/tools.md §10).
type HookMatcher struct {
	// Matcher selects tools: empty or "*" for all, a name, an `a|b` list,
	// or a regular expression.
	Matcher string        `json:"matcher"`
	Hooks   []HookCommand `json:"hooks"`
}

// HookCommand is one hook to run.
type HookCommand struct {
	// Type is "command"; other types are skipped.
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout is in seconds; 0 means the default.
	Timeout float64 `json:"timeout"`
}

// Locations says where settings are read from. Every field is optional;
// tests set them to temporary directories so the real home is never read.
type Locations struct {
	// Home is the home directory: `~/` in rules and directories, and
	// where .claude/settings.json (the user's Claude Code settings) is.
	Home string
	// ClaudeDir, when set, replaces Home/.claude (as CLAUDE_CONFIG_DIR
	// does for Claude Code).
	ClaudeDir string
	// ConfigDir holds agent-mcp's own user settings.json.
	ConfigDir string
	// Project is the project directory: .claude/settings.json and
	// .claude/settings.local.json under it are read.
	Project string
	// Extra are --settings values: a file path, or a JSON object.
	Extra []string
	// TrustProject trusts the project's own settings (--trust-project)
	// as if the operator had run `agent-mcp trust` on it.
	TrustProject bool
}

// DefaultLocations are the standard places for project: ~/.claude (or
// $CLAUDE_CONFIG_DIR), and configDir or, when it is empty,
// $XDG_CONFIG_HOME/agent-mcp (os.UserConfigDir). configDir is what the
// caller read of $AGENT_MCP_CONFIG_DIR.
func DefaultLocations(project, configDir string) Locations {
	loc := Locations{Project: project, ClaudeDir: os.Getenv("CLAUDE_CONFIG_DIR"), ConfigDir: configDir}
	if h, err := os.UserHomeDir(); err == nil {
		loc.Home = h
	}
	if c, err := os.UserConfigDir(); err == nil && loc.ConfigDir == "" {
		loc.ConfigDir = filepath.Join(c, "agent-mcp")
	}
	return loc
}

// Settings are the merged settings of every source.
type Settings struct {
	// Rules are every source's rules, lowest precedence first.
	Rules *permissions.RuleSet
	// DefaultMode is the mode of the highest-precedence source that set
	// one; empty when none did.
	DefaultMode permissions.Mode
	// AdditionalDirectories are absolute, from every source.
	AdditionalDirectories []string
	// PreToolUse and PostToolUse hooks, from every source in order.
	PreToolUse, PostToolUse []HookMatcher
	// Sources lists the files (or flag values) that were read.
	Sources []string
	// Home is the home directory `~/` in rules refers to.
	Home string
	// Model is the "model" of the highest-precedence source that set one
	// (`provider/name`; a bare name is an Anthropic model); empty when
	// none did.
	Model string
	// Ignored says, one sentence each, which entries of the workspace's
	// own settings were left out because the workspace is not trusted.
	Ignored []string
	// Sandbox is the merged sandbox settings.
	Sandbox SandboxSettings
	// LSPServers are the lspServers entries of every source, lowest
	// precedence first (a later entry of a name replaces an earlier one).
	LSPServers []LSPServer
	// LSPDiagnosticsWait is the last source's lspDiagnosticsWaitMs; 0
	// when none set one.
	LSPDiagnosticsWait time.Duration
	// WorkspaceTrusted is whether the project's own files may widen what
	// runs (then its .lsp.json is read too).
	WorkspaceTrusted bool
	// Unknown says, one sentence each, which keys of the sources neither
	// agent-mcp nor Claude Code knows, with the closest known key
	// ([UnknownKeys]): the caller shows them at start.
	Unknown []string
	// RedactValues, RedactEnvVars and RedactPatterns are redact.values,
	// envVars and patterns of every source.
	RedactValues, RedactEnvVars []string
	RedactPatterns              []RedactPattern
}

// LSPServer is one lspServers entry and the file it came from.
type LSPServer struct {
	Name, Source string
	Entry        json.RawMessage
}

// Load reads and merges the settings at loc, lowest precedence first: the
// user's ~/.claude/settings.json, agent-mcp's user settings, the project's
// .claude/settings.json and .claude/settings.local.json, then each
// --settings value. Rule lists, directories and hooks are merged; the
// default mode comes from the last source that sets one. A missing file is
// skipped; a file that is not valid JSON, or holds a rule that does not
// parse, is an error naming the file.
func Load(loc Locations) (*Settings, error) {
	s := &Settings{Rules: &permissions.RuleSet{}, Home: loc.Home}
	type source struct {
		name, root string
		// workspace marks the project's own files: a cloned repository
		// may narrow permissions with them, but widens them only once
		// trusted.
		workspace bool
	}
	var files []source
	userFile := ""
	if claude := loc.ClaudeDir; claude != "" {
		userFile = filepath.Join(claude, "settings.json")
	} else if loc.Home != "" {
		userFile = filepath.Join(loc.Home, ".claude", "settings.json")
	}
	if userFile != "" {
		files = append(files, source{userFile, loc.Home, false})
	}
	if loc.ConfigDir != "" {
		files = append(files, source{filepath.Join(loc.ConfigDir, "settings.json"), loc.Project, false})
	}
	trusted := loc.TrustProject
	if loc.Project != "" {
		if !trusted {
			t, err := Trusted(loc.ConfigDir, loc.Project)
			if err != nil {
				return nil, fmt.Errorf("reading settings: %w", err)
			}
			trusted = t
		}
		s.WorkspaceTrusted = trusted
		for _, n := range []string{"settings.json", "settings.local.json"} {
			p := filepath.Join(loc.Project, ".claude", n)
			if p == userFile {
				continue // the project is the home directory: read once, as the user's
			}
			files = append(files, source{p, loc.Project, !trusted})
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f.name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading settings: %w", err)
		}
		if err := s.merge(f.name, f.root, loc, data, f.workspace); err != nil {
			return nil, err
		}
	}
	for _, e := range loc.Extra {
		if t := strings.TrimSpace(e); strings.HasPrefix(t, "{") {
			if err := s.merge("--settings", loc.Project, loc, []byte(t), false); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(e)
		if err != nil {
			return nil, fmt.Errorf("--settings: %w", err)
		}
		if err := s.merge(e, loc.Project, loc, data, false); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// merge adds one source's settings; root anchors its `/path` rules and
// relative directories. untrusted leaves out what would widen
// permissions (see [Settings.Ignored]).
func (s *Settings) merge(name, root string, loc Locations, data []byte, untrusted bool) error {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return decodeError(name, data, err)
	}
	s.Unknown = append(s.Unknown, UnknownKeys(name, data)...)
	if untrusted {
		s.dropWidening(name, loc.Project, &f)
	}
	s.Sources = append(s.Sources, name)
	anchors := permissions.Anchors{Home: loc.Home, Root: root, Cwd: loc.Project}
	for _, list := range []struct {
		b     permissions.Behavior
		rules []string
	}{{permissions.Deny, f.Permissions.Deny}, {permissions.Ask, f.Permissions.Ask}, {permissions.Allow, f.Permissions.Allow}} {
		if err := s.AddRules(list.b, list.rules, name, anchors); err != nil {
			return err
		}
	}
	if m := strings.TrimSpace(f.Model); m != "" {
		if !strings.Contains(m, "/") {
			m = "anthropic/" + m
		}
		s.Model = m
	}
	if f.Permissions.DefaultMode != "" {
		m, err := permissions.ParseMode(f.Permissions.DefaultMode)
		if err != nil {
			return fmt.Errorf("settings %s: permissions.defaultMode: %w", name, err)
		}
		s.DefaultMode = m
	}
	project := loc.Project != "" && strings.HasPrefix(name, filepath.Join(loc.Project, ".claude")+string(filepath.Separator))
	if err := s.Sandbox.merge(f.Sandbox, root, loc.Home, project, name); err != nil {
		return fmt.Errorf("settings %s: %w", name, err)
	}
	if err := s.mergeRedact(f.Redact); err != nil {
		return fmt.Errorf("settings %s: %w", name, err)
	}
	for _, d := range f.Permissions.AdditionalDirectories {
		s.AdditionalDirectories = append(s.AdditionalDirectories, expandDir(d, root, loc.Home))
	}
	for _, n := range slices.Sorted(maps.Keys(f.LSPServers)) {
		s.LSPServers = append(s.LSPServers, LSPServer{Name: n, Source: name, Entry: f.LSPServers[n]})
	}
	if w := f.LSPDiagnosticsWaitMs; w != nil {
		if *w < 1 {
			return fmt.Errorf("settings %s: lspDiagnosticsWaitMs: must be at least 1 (milliseconds), got %d", name, *w)
		}
		s.LSPDiagnosticsWait = time.Duration(*w) * time.Millisecond
	}
	for _, ev := range []struct {
		name string
		dst  *[]HookMatcher
	}{{"PreToolUse", &s.PreToolUse}, {"PostToolUse", &s.PostToolUse}} {
		raw, ok := f.Hooks[ev.name]
		if !ok {
			continue
		}
		var matchers []HookMatcher
		if err := json.Unmarshal(raw, &matchers); err != nil {
			return decodeErrorAt(name, data, []string{"hooks", ev.name}, err)
		}
		*ev.dst = append(*ev.dst, matchers...)
	}
	return nil
}

// dropWidening removes from an untrusted workspace file f what would
// widen permissions (allow rules, a defaultMode other than default or
// plan, additionalDirectories, hooks), noting each in s.Ignored. Deny and
// ask rules stay: they only narrow.
func (s *Settings) dropWidening(name, project string, f *File) {
	why := fmt.Sprintf("the workspace %s is not trusted (run `agent-mcp trust %s`, or start with --trust-project)", project, project)
	if n := len(f.Permissions.Allow); n > 0 {
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s: ignored %d allow rule(s) %q: %s", name, n, f.Permissions.Allow, why))
		f.Permissions.Allow = nil
	}
	if m := f.Permissions.DefaultMode; m != "" && m != string(permissions.ModeDefault) && m != string(permissions.ModePlan) {
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s: ignored defaultMode %q: %s", name, m, why))
		f.Permissions.DefaultMode = ""
	}
	if d := f.Permissions.AdditionalDirectories; len(d) > 0 {
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s: ignored additionalDirectories %q: %s", name, d, why))
		f.Permissions.AdditionalDirectories = nil
	}
	if len(f.Hooks) > 0 {
		events := make([]string, 0, len(f.Hooks))
		for e := range f.Hooks {
			events = append(events, e)
		}
		slices.Sort(events)
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s: ignored hooks (%s): %s", name, strings.Join(events, ", "), why))
		f.Hooks = nil
	}
	if len(f.LSPServers) > 0 {
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s: ignored lspServers (%s): %s", name, strings.Join(slices.Sorted(maps.Keys(f.LSPServers)), ", "), why))
		f.LSPServers = nil
	}
	for _, key := range f.Sandbox.dropWidening() {
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s: ignored sandbox.%s: %s", name, key, why))
	}
}

// AddRules parses and adds rules of behavior b from source.
func (s *Settings) AddRules(b permissions.Behavior, rules []string, source string, a permissions.Anchors) error {
	return s.Rules.AddText(b, rules, source, a)
}

func expandDir(d, root, home string) string {
	switch {
	case d == "~" || strings.HasPrefix(d, "~/"):
		d = filepath.Join(home, strings.TrimPrefix(d[1:], "/"))
	case !filepath.IsAbs(d):
		d = filepath.Join(root, d)
	}
	return filepath.Clean(d)
}

// mergeRedact checks and adds one source's redact object.
func (s *Settings) mergeRedact(r *RedactFile) error {
	if r == nil {
		return nil
	}
	for i, v := range r.Values {
		if len(v) < 8 {
			return fmt.Errorf("redact.values[%d]: a value shorter than 8 characters would replace ordinary text everywhere", i)
		}
	}
	for i, n := range r.EnvVars {
		if !validEnvName(n) || strings.HasSuffix(n, "*") {
			return fmt.Errorf("redact.envVars[%d]: %q is not a variable name", i, n)
		}
	}
	for i, p := range r.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("redact.patterns[%d]: %w (Go's RE2 syntax)", i, err)
		}
		if re.MatchString("") {
			return fmt.Errorf("redact.patterns[%d]: %q matches the empty text", i, p)
		}
		s.RedactPatterns = append(s.RedactPatterns, RedactPattern{Name: fmt.Sprintf("redact.patterns[%d]", len(s.RedactPatterns)), Re: re})
	}
	s.RedactValues = append(s.RedactValues, r.Values...)
	s.RedactEnvVars = append(s.RedactEnvVars, r.EnvVars...)
	return nil
}

package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// SandboxFile is the "sandbox" object of a settings file: Claude Code's
// keys where they map, and agent-mcp's buildCaches.
type SandboxFile struct {
	// Enabled false turns the sandbox off (as --sandbox off).
	Enabled *bool `json:"enabled"`
	// AutoAllowBashIfSandboxed (default true) lets a sandboxed command
	// run without a permission question when no rule asks or denies.
	AutoAllowBashIfSandboxed *bool `json:"autoAllowBashIfSandboxed"`
	// ExcludedCommands run outside the sandbox, each after a question.
	ExcludedCommands []string `json:"excludedCommands"`
	// Network is false to leave commands only a private loopback; true
	// or Claude Code's object (whose proxy keys are not used) allows it.
	Network json.RawMessage `json:"network"`
	// BuildCaches replaces the default list of the user's build caches
	// that commands get per-workspace stand-ins for (package sandbox).
	BuildCaches *[]string `json:"buildCaches"`
	// AllowUserNamespaces lets a sandboxed command make user namespaces
	// of its own (refused by default).
	AllowUserNamespaces *bool `json:"allowUserNamespaces"`
	// Limits caps each command's processes and memory.
	Limits *SandboxLimitsFile `json:"limits"`
	// Env is the "env" object: allow lists the server's variables a
	// command gets beyond those a shell and a build need.
	Env *SandboxEnvFile `json:"env"`
	// Filesystem is the "filesystem" object: allowRead opens paths of
	// the private home to commands, denyRead keeps paths unreadable.
	Filesystem *SandboxFilesystemFile `json:"filesystem"`
	// Credentials is Claude Code's "credentials" object: variables and
	// files denied, or masked with sentinels the egress proxy swaps for
	// the real values toward named hosts.
	Credentials *SandboxCredentialsFile `json:"credentials"`
}

// SandboxCredentialsFile is sandbox.credentials, as Claude Code spells it.
type SandboxCredentialsFile struct {
	EnvVars []CredentialEntry `json:"envVars"`
	Files   []CredentialEntry `json:"files"`
	// AllowPlaintextInject lets a masked value be injected into plain
	// HTTP; read from the user's settings and --settings only.
	AllowPlaintextInject *bool `json:"allowPlaintextInject"`
	// AWSPairs and SigV4 are Claude Code's AWS re-signing, which
	// agent-mcp does not do: accepted and ignored.
	AWSPairs json.RawMessage `json:"awsPairs"`
	SigV4    json.RawMessage `json:"sigv4"`
}

// CredentialEntry is one envVars entry (Name) or files entry (Path).
type CredentialEntry struct {
	Name             string   `json:"name"`
	Path             string   `json:"path"`
	Mode             string   `json:"mode"`
	Extract          *string  `json:"extract"`
	OnExtractNoMatch string   `json:"onExtractNoMatch"`
	InjectHosts      []string `json:"injectHosts"`
	MaskDuplicates   *bool    `json:"maskDuplicates"`
	// Decode and MaskClaims are Claude Code's JWT masking, which
	// agent-mcp does not do: an entry with them is denied instead.
	Decode     string   `json:"decode"`
	MaskClaims []string `json:"maskClaims"`
}

// Credential is one merged sandbox.credentials entry, checked: Name for
// a variable, Path (absolute) for a file; Extract compiled.
type Credential struct {
	Name, Path       string
	Mode             string // "deny" or "mask"
	Extract          *regexp.Regexp
	OnExtractNoMatch string // "warn", "deny" or "error"
	InjectHosts      []string
	MaskDuplicates   bool
	// Source is the settings file it came from.
	Source string
}

// SandboxFilesystemFile is the sandbox's "filesystem" object, as Claude
// Code's settings spell it: paths ("~/" is the home, a relative path is
// the settings' project's).
type SandboxFilesystemFile struct {
	// AllowRead are paths under the home a command may read (the home
	// is private to the sandbox by default).
	AllowRead []string `json:"allowRead"`
	// DenyRead are paths a command may not read.
	DenyRead []string `json:"denyRead"`
}

// SandboxEnvFile is the sandbox's "env" object.
type SandboxEnvFile struct {
	// Allow names variables of the server's environment that commands,
	// background tasks and language servers get (GITHUB_TOKEN, say):
	// a name, or a prefix ending in "*" (MYAPP_*).
	Allow []string `json:"allow"`
}

// SandboxLimitsFile is the sandbox's "limits" object: processes is a
// count (processes and threads), memory bytes as a number or a string
// with a binary suffix ("512MiB", "8G"); 0 or "max" sets no cap.
type SandboxLimitsFile struct {
	Processes *int64          `json:"processes"`
	Memory    json.RawMessage `json:"memory"`
}

// SandboxSettings are the sandbox settings of every source, merged: the
// last source that sets a value wins; lists are joined.
type SandboxSettings struct {
	// Enabled is nil when no source set it.
	Enabled *bool
	// AutoAllow is nil when no source set it (the default is true).
	AutoAllow *bool
	// Excluded are the excluded commands of every source.
	Excluded []string
	// Network is the last source's sandbox.network: "proxy" (a string,
	// or Claude Code's network object), "on" (true) or "off" (false, or
	// an object with enabled false); empty when no source set it (the
	// default is the proxy).
	Network string
	// AllowedDomains and DeniedDomains are the network object's
	// allowedDomains and deniedDomains of every source.
	AllowedDomains, DeniedDomains []string
	// BuildCaches are absolute; nil when no source set them (the default
	// list applies).
	BuildCaches []string
	// AllowUserNamespaces is true when the last source that set
	// allowUserNamespaces allowed them.
	AllowUserNamespaces bool
	// LimitProcesses and LimitMemory cap each command: 0 when no source
	// set them (the default applies), negative for no cap.
	LimitProcesses, LimitMemory int64
	// EnvAllow are the env.allow names of every source: variables a
	// command gets beyond those a shell and a build need.
	EnvAllow []string
	// AllowRead and DenyRead are filesystem.allowRead and denyRead of
	// every source, absolute.
	AllowRead, DenyRead []string
	// CredentialEnvs and CredentialFiles are credentials.envVars and
	// files of every source; a later entry for the same name or path
	// replaces an earlier one.
	CredentialEnvs, CredentialFiles []Credential
	// AllowPlaintextInject is the last user or --settings source's
	// credentials.allowPlaintextInject (a project's is ignored).
	AllowPlaintextInject bool
	// TLSTerminate is set when the last user or --settings source's
	// network object has tlsTerminate; TLSCACert and TLSCAKey are its
	// caCertPath and caKeyPath (absolute; empty for a CA per session).
	TLSTerminate        bool
	TLSCACert, TLSCAKey string
	// Warnings are what the credentials' entries do differently in
	// agent-mcp (JWT decoding), for the log.
	Warnings []string
}

func (s *SandboxSettings) merge(f *SandboxFile, root, home string, project bool, source string) error {
	if f == nil {
		return nil
	}
	if err := s.mergeCredentials(f.Credentials, root, home, project, source); err != nil {
		return err
	}
	if err := s.mergeTLS(f.Network, root, home, project); err != nil {
		return err
	}
	if f.Enabled != nil {
		s.Enabled = f.Enabled
	}
	if f.AutoAllowBashIfSandboxed != nil {
		s.AutoAllow = f.AutoAllowBashIfSandboxed
	}
	s.Excluded = append(s.Excluded, f.ExcludedCommands...)
	if f.AllowUserNamespaces != nil {
		s.AllowUserNamespaces = *f.AllowUserNamespaces
	}
	if n := bytes.TrimSpace(f.Network); len(n) > 0 && !bytes.Equal(n, []byte("null")) {
		switch {
		case bytes.Equal(n, []byte("false")):
			s.Network = "off"
		case bytes.Equal(n, []byte("true")):
			s.Network = "on"
		case bytes.Equal(n, []byte(`"proxy"`)):
			s.Network = "proxy"
		case n[0] == '{':
			var o struct {
				Enabled        *bool    `json:"enabled"`
				AllowedDomains []string `json:"allowedDomains"`
				DeniedDomains  []string `json:"deniedDomains"`
			}
			if err := json.Unmarshal(n, &o); err != nil {
				return fmt.Errorf("sandbox.network: %w", err)
			}
			s.Network = "proxy"
			if o.Enabled != nil && !*o.Enabled {
				s.Network = "off"
			}
			s.AllowedDomains = append(s.AllowedDomains, o.AllowedDomains...)
			s.DeniedDomains = append(s.DeniedDomains, o.DeniedDomains...)
		default:
			return fmt.Errorf(`sandbox.network must be "proxy", true, false or an object with allowedDomains and deniedDomains, got %s`, n)
		}
	}
	if l := f.Limits; l != nil {
		if l.Processes != nil {
			if *l.Processes < 0 {
				return fmt.Errorf("sandbox.limits.processes must be a count of processes (0 for no limit), got %d", *l.Processes)
			}
			s.LimitProcesses = noCapIfZero(*l.Processes)
		}
		if m := bytes.TrimSpace(l.Memory); len(m) > 0 && !bytes.Equal(m, []byte("null")) {
			n, err := parseMemory(m)
			if err != nil {
				return fmt.Errorf("sandbox.limits.memory: %w", err)
			}
			s.LimitMemory = noCapIfZero(n)
		}
	}
	if f.Env != nil {
		for i, name := range f.Env.Allow {
			if !validEnvName(name) {
				return fmt.Errorf(`sandbox.env.allow[%d]: %q is not a variable name (letters, digits and "_", not starting with a digit, optionally ending in "*" for every name it begins)`, i, name)
			}
		}
		s.EnvAllow = append(s.EnvAllow, f.Env.Allow...)
	}
	if fs := f.Filesystem; fs != nil {
		for _, fl := range []struct {
			name string
			list []string
		}{{"allowRead", fs.AllowRead}, {"denyRead", fs.DenyRead}} {
			for i, d := range fl.list {
				if strings.TrimSpace(d) == "" || strings.ContainsRune(d, 0) {
					return fmt.Errorf("sandbox.filesystem.%s[%d]: %q is not a path", fl.name, i, d)
				}
			}
		}
		for _, d := range fs.AllowRead {
			s.AllowRead = append(s.AllowRead, expandDir(d, root, home))
		}
		for _, d := range fs.DenyRead {
			s.DenyRead = append(s.DenyRead, expandDir(d, root, home))
		}
	}
	if f.BuildCaches != nil {
		s.BuildCaches = []string{}
		for _, d := range *f.BuildCaches {
			s.BuildCaches = append(s.BuildCaches, expandDir(d, root, home))
		}
	}
	return nil
}

// dropWidening removes what loosens the sandbox (turning it off, excluded
// commands, writable caches, network, fewer questions) from an untrusted
// workspace's settings, keeping what tightens it, and names what it
// removed.
func (f *SandboxFile) dropWidening() []string {
	if f == nil {
		return nil
	}
	var keys []string
	if f.Enabled != nil && !*f.Enabled {
		f.Enabled, keys = nil, append(keys, "enabled")
	}
	if f.AutoAllowBashIfSandboxed != nil && *f.AutoAllowBashIfSandboxed {
		f.AutoAllowBashIfSandboxed, keys = nil, append(keys, "autoAllowBashIfSandboxed")
	}
	if len(f.ExcludedCommands) > 0 {
		f.ExcludedCommands, keys = nil, append(keys, "excludedCommands")
	}
	if f.BuildCaches != nil {
		f.BuildCaches, keys = nil, append(keys, "buildCaches")
	}
	if f.Limits != nil {
		f.Limits, keys = nil, append(keys, "limits")
	}
	if f.Filesystem != nil && len(f.Filesystem.AllowRead) > 0 {
		// A repository's settings must not open the user's home.
		f.Filesystem.AllowRead, keys = nil, append(keys, "filesystem.allowRead")
	}
	if f.Env != nil && len(f.Env.Allow) > 0 {
		// A variable named here hands the server's secret to whatever
		// the repository's scripts run.
		f.Env, keys = nil, append(keys, "env.allow")
	}
	if c := f.Credentials; c != nil {
		// A mask hands a command a stand-in the proxy turns into the
		// user's secret toward hosts: the repository's scripts would
		// choose where it goes. Denials only tighten.
		for _, list := range []*[]CredentialEntry{&c.EnvVars, &c.Files} {
			kept := (*list)[:0]
			for _, e := range *list {
				if e.Mode == "mask" {
					keys = append(keys, "credentials (mode mask)")
					continue
				}
				kept = append(kept, e)
			}
			*list = kept
		}
	}
	switch n := bytes.TrimSpace(f.Network); {
	case bytes.Equal(n, []byte("true")):
		f.Network, keys = nil, append(keys, "network")
	case len(n) > 0 && n[0] == '{':
		// The proxy and deniedDomains tighten; allowedDomains and
		// turning the proxy into an open network widen.
		var o map[string]json.RawMessage
		if json.Unmarshal(n, &o) == nil {
			if _, ok := o["allowedDomains"]; ok {
				delete(o, "allowedDomains")
				keys = append(keys, "network.allowedDomains")
				f.Network, _ = json.Marshal(o)
			}
		}
	}
	return keys
}

// validEnvName reports whether name can be an entry of sandbox.env.allow:
// a variable's name (letters, digits and underscores, not starting with a
// digit), optionally ending in "*" to admit every name it begins.
func validEnvName(name string) bool {
	name = strings.TrimSuffix(name, "*")
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// noCapIfZero maps a setting's 0 (no cap) to -1, leaving 0 for "not set".
func noCapIfZero(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// parseMemory reads a memory size: bytes as a JSON number, or a string of
// a number with an optional binary suffix (K, M, G, T, with or without
// "iB" or "B"), or "max" (0: no cap).
func parseMemory(raw json.RawMessage) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("must be a size in bytes (0 for no limit), got %d", n)
		}
		return n, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err != nil {
		return 0, fmt.Errorf(`must be a number of bytes or a string such as "8GiB" or "max", got %s`, raw)
	}
	t := strings.ToUpper(strings.TrimSpace(str))
	if t == "MAX" {
		return 0, nil
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if k := strings.IndexAny(t, "KMGT"); k >= 0 && k == len(t)-1 {
		mult = int64(1) << (10 * (1 + strings.IndexByte("KMGT", t[k])))
		t = t[:k]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf(`must be a number of bytes or a string such as "8GiB" or "max", got %q`, str)
	}
	return int64(v * float64(mult)), nil
}

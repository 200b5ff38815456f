package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	// BuildCaches replaces the default list of writable per-user caches.
	BuildCaches *[]string `json:"buildCaches"`
	// AllowUserNamespaces lets a sandboxed command make user namespaces
	// of its own (refused by default).
	AllowUserNamespaces *bool `json:"allowUserNamespaces"`
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
	// NetworkOff is true when the last source that set network turned it
	// off.
	NetworkOff bool
	// BuildCaches are absolute; nil when no source set them (the default
	// list applies).
	BuildCaches []string
	// AllowUserNamespaces is true when the last source that set
	// allowUserNamespaces allowed them.
	AllowUserNamespaces bool
}

func (s *SandboxSettings) merge(f *SandboxFile, root, home string) error {
	if f == nil {
		return nil
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
			s.NetworkOff = true
		case bytes.Equal(n, []byte("true")):
			s.NetworkOff = false
		case n[0] == '{':
			var o struct {
				Enabled *bool `json:"enabled"`
			}
			if err := json.Unmarshal(n, &o); err != nil {
				return fmt.Errorf("sandbox.network: %w", err)
			}
			s.NetworkOff = o.Enabled != nil && !*o.Enabled
		default:
			return fmt.Errorf("sandbox.network must be true, false or an object, got %s", n)
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
	if n := bytes.TrimSpace(f.Network); len(n) > 0 && !bytes.Equal(n, []byte("false")) && !bytes.Equal(n, []byte("null")) {
		f.Network, keys = nil, append(keys, "network")
	}
	return keys
}

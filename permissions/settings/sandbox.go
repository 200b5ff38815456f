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

package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// mergeCredentials checks and adds one source's sandbox.credentials. A
// project's allowPlaintextInject is ignored, as Claude Code ignores it.
func (s *SandboxSettings) mergeCredentials(c *SandboxCredentialsFile, root, home string, project bool, source string) error {
	if c == nil {
		return nil
	}
	for i, e := range c.EnvVars {
		field := fmt.Sprintf("sandbox.credentials.envVars[%d]", i)
		if !validEnvName(e.Name) || strings.HasSuffix(e.Name, "*") {
			return fmt.Errorf(`%s.name: %q is not a variable name (letters, digits and "_", not starting with a digit)`, field, e.Name)
		}
		if e.Path != "" {
			return fmt.Errorf("%s: an envVars entry names a variable (name), not a path", field)
		}
		cr, err := s.credential(e, field, source)
		if err != nil {
			return err
		}
		cr.Name = e.Name
		s.CredentialEnvs = replaceCredential(s.CredentialEnvs, cr, func(a Credential) bool { return a.Name == e.Name })
	}
	for i, e := range c.Files {
		field := fmt.Sprintf("sandbox.credentials.files[%d]", i)
		if strings.TrimSpace(e.Path) == "" || strings.ContainsRune(e.Path, 0) {
			return fmt.Errorf("%s.path: %q is not a path", field, e.Path)
		}
		if e.Name != "" {
			return fmt.Errorf("%s: a files entry names a path (path), not a variable", field)
		}
		if e.Mode == "mask" && strings.HasSuffix(e.Path, "/") {
			return fmt.Errorf(`%s.path: mode "mask" applies to a single file, not a directory (%s); list the files, or use "deny" for the directory`, field, e.Path)
		}
		cr, err := s.credential(e, field, source)
		if err != nil {
			return err
		}
		cr.Path = expandDir(e.Path, root, home)
		s.CredentialFiles = replaceCredential(s.CredentialFiles, cr, func(a Credential) bool { return a.Path == cr.Path })
	}
	if c.AllowPlaintextInject != nil && !project {
		s.AllowPlaintextInject = *c.AllowPlaintextInject
	}
	return nil
}

// credential checks the fields an envVars and a files entry share.
func (s *SandboxSettings) credential(e CredentialEntry, field, source string) (Credential, error) {
	cr := Credential{Mode: e.Mode, OnExtractNoMatch: e.OnExtractNoMatch, InjectHosts: e.InjectHosts, Source: source}
	switch e.Mode {
	case "deny", "mask":
	default:
		return cr, fmt.Errorf(`%s.mode: %q is not "deny" or "mask"`, field, e.Mode)
	}
	switch e.OnExtractNoMatch {
	case "":
		cr.OnExtractNoMatch = "warn"
	case "warn", "deny", "error":
	default:
		return cr, fmt.Errorf(`%s.onExtractNoMatch: %q is not "warn", "deny" or "error"`, field, e.OnExtractNoMatch)
	}
	if e.Extract != nil && e.Mode == "mask" {
		re, err := regexp.Compile(*e.Extract)
		if err != nil {
			return cr, fmt.Errorf("%s.extract: %w (agent-mcp reads Go's RE2 syntax: no lookaround or backreferences)", field, err)
		}
		if re.NumSubexp() < 1 {
			return cr, fmt.Errorf("%s.extract: %q has no capture group; group 1 marks the value to mask", field, *e.Extract)
		}
		cr.Extract = re
	}
	for j, h := range e.InjectHosts {
		if err := checkHost(fmt.Sprintf("%s.injectHosts[%d]", field, j), h); err != nil {
			return cr, err
		}
	}
	if e.MaskDuplicates != nil {
		cr.MaskDuplicates = *e.MaskDuplicates
	}
	if (e.Decode != "" || len(e.MaskClaims) > 0) && e.Mode == "mask" {
		cr.Mode = "deny"
		s.Warnings = append(s.Warnings, fmt.Sprintf("settings %s: %s: agent-mcp does not decode JWTs (decode, maskClaims): the entry is treated as mode deny", source, field))
	}
	return cr, nil
}

// checkHost says what is wrong with an injectHosts entry: a domain name,
// *.domain or an IP address, as sandbox.network.allowedDomains takes.
func checkHost(field, h string) error {
	q := strings.TrimPrefix(h, "*.")
	if h == "" || q == "" || strings.ContainsAny(q, "*/:?#@ ") {
		return fmt.Errorf("%s: %q is not a domain; write a name such as api.github.com or *.github.com", field, h)
	}
	return nil
}

func replaceCredential(list []Credential, c Credential, same func(Credential) bool) []Credential {
	for i, a := range list {
		if same(a) {
			list[i] = c
			return list
		}
	}
	return append(list, c)
}

// mergeTLS reads the network object's tlsTerminate (Claude Code's
// {caCertPath, caKeyPath}); a project's is ignored, as Claude Code
// ignores it.
func (s *SandboxSettings) mergeTLS(network json.RawMessage, root, home string, project bool) error {
	n := bytes.TrimSpace(network)
	if len(n) == 0 || n[0] != '{' || project {
		return nil
	}
	var o struct {
		TLSTerminate json.RawMessage `json:"tlsTerminate"`
	}
	if err := json.Unmarshal(n, &o); err != nil {
		return fmt.Errorf("sandbox.network: %w", err)
	}
	t := bytes.TrimSpace(o.TLSTerminate)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	var ca struct {
		CACertPath *string `json:"caCertPath"`
		CAKeyPath  *string `json:"caKeyPath"`
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ca); err != nil {
		return fmt.Errorf("sandbox.network.tlsTerminate: must be an object with caCertPath and caKeyPath (both, or neither for a CA per session): %w", err)
	}
	if (ca.CACertPath == nil) != (ca.CAKeyPath == nil) {
		return fmt.Errorf("sandbox.network.tlsTerminate: caCertPath and caKeyPath must be given together")
	}
	s.TLSTerminate, s.TLSCACert, s.TLSCAKey = true, "", ""
	if ca.CACertPath != nil {
		if *ca.CACertPath == "" || *ca.CAKeyPath == "" {
			return fmt.Errorf("sandbox.network.tlsTerminate: caCertPath and caKeyPath must not be empty")
		}
		s.TLSCACert, s.TLSCAKey = expandDir(*ca.CACertPath, root, home), expandDir(*ca.CAKeyPath, root, home)
	}
	return nil
}

package sandbox

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agent-mcp/agent-mcp/sandbox/egress"
	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// CredentialMode is what a sandbox.credentials entry does.
type CredentialMode string

// Credential modes.
const (
	// CredentialDeny removes the variable, or makes the file unreadable.
	CredentialDeny CredentialMode = "deny"
	// CredentialMask gives the command a sentinel instead of the value;
	// the egress proxy puts the value back toward the entry's hosts.
	CredentialMask CredentialMode = "mask"
)

// NoMatch is what a mask entry with Extract does when the pattern finds
// nothing (onExtractNoMatch).
type NoMatch string

// NoMatch behaviours.
const (
	// NoMatchWarn leaves the value as it is and says so (the default).
	NoMatchWarn NoMatch = "warn"
	// NoMatchDeny treats the entry as mode deny.
	NoMatchDeny NoMatch = "deny"
	// NoMatchError refuses to start the command.
	NoMatchError NoMatch = "error"
)

// CredentialEnv is one sandbox.credentials.envVars entry.
type CredentialEnv struct {
	Name string
	Mode CredentialMode
	// Extract, when set, masks only the spans its group 1 captures.
	Extract *regexp.Regexp
	// OnNoMatch is what happens when Extract captures nothing.
	OnNoMatch NoMatch
	// InjectHosts are where the value is injected; empty means the
	// allowed domains.
	InjectHosts []string
}

// CredentialFile is one sandbox.credentials.files entry.
type CredentialFile struct {
	// Path is absolute.
	Path string
	Mode CredentialMode
	// Extract, when set, masks only the spans its group 1 captures;
	// else the whole content (but a final line break) is one secret.
	Extract *regexp.Regexp
	// MaskDuplicates also masks each captured value where it appears
	// outside the captured spans.
	MaskDuplicates bool
	OnNoMatch      NoMatch
	InjectHosts    []string
}

// sessionCreds are one session's masked credentials: the sentinels made
// for it, the masked copies of its files, the proxy's CA.
type sessionCreds struct {
	inject *egress.Inject
	// env are NAME=sentinel entries; unset the names the command loses.
	env, unset []string
	// overlays map a masked file to its copy; denied are the files
	// made unreadable.
	overlays map[string]string
	denied   []string
	// caEnv point the command's TLS clients at the bundle that trusts
	// the proxy's CA.
	caEnv []string
	// notes are said once per command (a warning of onExtractNoMatch, a
	// mask that Landlock alone cannot hold).
	notes []string
	noted atomic.Bool
	err   error
}

// credStore holds the sessions' credentials by state directory.
type credStore struct {
	mu       sync.Mutex
	sessions map[string]*sessionCreds
}

// masks reports whether the settings mask or deny anything, or ask for
// TLS termination.
func (o *Options) masks() bool {
	return len(o.CredentialEnvs)+len(o.CredentialFiles) > 0 || o.TLSTerminate
}

// credentials are the masked credentials of the session keeping its
// state in stateDir, made on its first command.
func (s *Sandbox) credentials(stateDir string) (*sessionCreds, error) {
	if !s.opts.masks() {
		return nil, nil
	}
	s.creds.mu.Lock()
	defer s.creds.mu.Unlock()
	if c, ok := s.creds.sessions[stateDir]; ok {
		return c, c.err
	}
	c := s.newSessionCreds(stateDir)
	if s.creds.sessions == nil {
		s.creds.sessions = map[string]*sessionCreds{}
	}
	s.creds.sessions[stateDir] = c
	return c, c.err
}

func (s *Sandbox) newSessionCreds(stateDir string) *sessionCreds {
	c := &sessionCreds{overlays: map[string]string{}}
	in := &egress.Inject{Plaintext: s.opts.AllowPlaintextInject, TerminateAll: s.opts.TLSTerminate, Roots: s.opts.UpstreamRoots}
	c.inject = in
	for _, e := range s.opts.CredentialEnvs {
		real, ok := os.LookupEnv(e.Name)
		if !ok {
			continue
		}
		c.unset = append(c.unset, e.Name)
		if e.Mode != CredentialMask {
			continue
		}
		masked, secrets, note, err := maskText(real, e.Name, e.Extract, false, e.OnNoMatch, e.InjectHosts)
		switch {
		case err != nil:
			c.err = fmt.Errorf("sandbox.credentials.envVars %s: %w", e.Name, err)
			return c
		case note == string(NoMatchDeny):
			c.notes = append(c.notes, fmt.Sprintf("sandbox.credentials: extract found nothing in %s; the variable is withheld (onExtractNoMatch deny)", e.Name))
			continue
		case note != "":
			c.notes = append(c.notes, fmt.Sprintf("sandbox.credentials: extract found nothing in %s; the command gets it as it is (onExtractNoMatch warn)", e.Name))
		}
		c.env = append(c.env, e.Name+"="+masked)
		in.Secrets = append(in.Secrets, secrets...)
	}
	if c.err = s.maskFiles(c, stateDir); c.err != nil {
		return c
	}
	if len(in.Secrets) > 0 || in.TerminateAll {
		if c.err = s.sessionCA(c, stateDir); c.err != nil {
			return c
		}
	}
	return c
}

// maskFiles makes the masked copies of the credential files in the
// session's state directory.
func (s *Sandbox) maskFiles(c *sessionCreds, stateDir string) error {
	for i, f := range s.opts.CredentialFiles {
		path := f.Path
		if r, err := filepath.EvalSymlinks(path); err == nil {
			path = r
		}
		st, err := os.Stat(path)
		if err != nil {
			continue // nothing to protect
		}
		if f.Mode != CredentialMask || st.IsDir() {
			c.denied = append(c.denied, path)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			c.denied = append(c.denied, path)
			continue
		}
		masked, secrets, note, err := maskText(string(data), f.Path, f.Extract, f.MaskDuplicates, f.OnNoMatch, f.InjectHosts)
		switch {
		case err != nil:
			return fmt.Errorf("sandbox.credentials.files %s: %w", f.Path, err)
		case note == string(NoMatchDeny):
			c.notes = append(c.notes, fmt.Sprintf("sandbox.credentials: extract found nothing in %s; the file is unreadable (onExtractNoMatch deny)", f.Path))
			c.denied = append(c.denied, path)
			continue
		case note != "":
			c.notes = append(c.notes, fmt.Sprintf("sandbox.credentials: extract found nothing in %s; commands read it as it is (onExtractNoMatch warn)", f.Path))
			continue
		}
		dir := filepath.Join(stateDir, "credentials")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("sandbox.credentials: %w", err)
		}
		copyPath := filepath.Join(dir, strconv.Itoa(i)+"-"+filepath.Base(path))
		_ = os.Remove(copyPath)
		if err := os.WriteFile(copyPath, []byte(masked), st.Mode().Perm()&0o444|0o400); err != nil {
			return fmt.Errorf("sandbox.credentials: %w", err)
		}
		c.overlays[path] = copyPath
		c.inject.Secrets = append(c.inject.Secrets, secrets...)
	}
	return nil
}

// sessionCA makes the session's CA (or takes the configured one) and
// writes its certificate and the merged bundle into the state
// directory, where a command reads them.
func (s *Sandbox) sessionCA(c *sessionCreds, stateDir string) error {
	ca := s.opts.TLSCA
	if ca == nil {
		var err error
		if ca, err = egress.NewCA(); err != nil {
			return fmt.Errorf("sandbox: the proxy's CA: %w", err)
		}
	}
	c.inject.CA = ca
	caFile, bundle := filepath.Join(stateDir, "egress-ca.pem"), filepath.Join(stateDir, "egress-ca-bundle.pem")
	for name, data := range map[string][]byte{caFile: ca.CertPEM(), bundle: ca.Bundle()} {
		_ = os.Remove(name)
		if err := os.WriteFile(name, data, 0o444); err != nil {
			return fmt.Errorf("sandbox: the proxy's CA: %w", err)
		}
	}
	c.caEnv = CAEnv(caFile, bundle)
	return nil
}

// CAEnv are the variables that make a command's TLS clients trust the
// proxy's CA: the merged bundle (the system's roots and the CA) for
// OpenSSL, curl, git, Python's requests and Go; the CA alone for Node,
// which adds it to its own roots; and NODE_USE_ENV_PROXY, which makes
// Node's fetch (22.21 and later) go through HTTPS_PROXY.
func CAEnv(caFile, bundle string) []string {
	return []string{
		"SSL_CERT_FILE=" + bundle, "REQUESTS_CA_BUNDLE=" + bundle, "CURL_CA_BUNDLE=" + bundle,
		"GIT_SSL_CAINFO=" + bundle, "AWS_CA_BUNDLE=" + bundle, "PIP_CERT=" + bundle,
		"NODE_EXTRA_CA_CERTS=" + caFile, "NODE_USE_ENV_PROXY=1",
	}
}

// maskText replaces the secrets of text by sentinels: its group-1 spans
// of extract (each distinct value one sentinel; with dups its other
// occurrences too), or all of it but a final line break without extract.
// note is the onExtractNoMatch behaviour when extract found nothing
// (warn, deny), err its error.
func maskText(text, name string, extract *regexp.Regexp, dups bool, onNoMatch NoMatch, hosts []string) (masked string, secrets []egress.Secret, note string, err error) {
	if extract == nil {
		real := strings.TrimRight(text, "\r\n")
		if real == "" {
			return text, nil, "", nil
		}
		sent := egress.Sentinel(real)
		return sent + text[len(real):], []egress.Secret{{Name: name, Real: real, Sentinel: sent, Hosts: hosts}}, "", nil
	}
	sentinels := map[string]string{}
	var b strings.Builder
	last := 0
	for _, m := range extract.FindAllStringSubmatchIndex(text, -1) {
		if len(m) < 4 || m[2] < 0 || m[3] <= m[2] || m[2] < last {
			continue
		}
		real := text[m[2]:m[3]]
		sent, ok := sentinels[real]
		if !ok {
			sent = egress.Sentinel(real)
			sentinels[real] = sent
			secrets = append(secrets, egress.Secret{Name: name, Real: real, Sentinel: sent, Hosts: hosts})
		}
		b.WriteString(text[last:m[2]])
		b.WriteString(sent)
		last = m[3]
	}
	b.WriteString(text[last:])
	if len(secrets) == 0 {
		switch onNoMatch {
		case NoMatchError:
			return "", nil, "", fmt.Errorf("extract %q found nothing to mask (onExtractNoMatch error)", extract)
		case NoMatchDeny:
			return "", nil, string(NoMatchDeny), nil
		}
		return text, nil, string(NoMatchWarn), nil
	}
	masked = b.String()
	if dups {
		// Longest first, so that a value inside another is not split.
		slices.SortFunc(secrets, func(a, b egress.Secret) int { return len(b.Real) - len(a.Real) })
		for _, s := range secrets {
			masked = strings.ReplaceAll(masked, s.Real, s.Sentinel)
		}
	}
	return masked, secrets, "", nil
}

// CredentialSecrets are the real values the settings' credentials hold
// (the masked and denied variables of env, the spans of the files a
// mask entry extracts, a whole file's content), named as their entry:
// what every tool result is redacted of.
func CredentialSecrets(envs []CredentialEnv, files []CredentialFile, env []string) (out [][2]string) {
	vals := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vals[k] = v
	}
	for _, e := range envs {
		v, ok := vals[e.Name]
		if !ok || v == "" {
			continue
		}
		if e.Extract != nil {
			for _, m := range e.Extract.FindAllStringSubmatch(v, -1) {
				if len(m) > 1 && m[1] != "" {
					out = append(out, [2]string{e.Name, m[1]})
				}
			}
		}
		out = append(out, [2]string{e.Name, v})
	}
	for _, f := range files {
		data, err := os.ReadFile(f.Path)
		if err != nil || bytes.IndexByte(data, 0) >= 0 && f.Extract == nil {
			continue
		}
		if f.Extract == nil {
			if v := strings.TrimRight(string(data), "\r\n"); v != "" {
				out = append(out, [2]string{f.Path, v})
			}
			continue
		}
		for _, m := range f.Extract.FindAllSubmatch(data, -1) {
			if len(m) > 1 && len(m[1]) > 0 {
				out = append(out, [2]string{f.Path, string(m[1])})
			}
		}
	}
	return out
}

// planCredentials binds the masked files' copies over them (the
// namespaces layer: their paths are kept in a private home so that the
// copy has a place to go); with Landlock alone, which has no mounts, a
// masked file is left unreadable where the private home holds it, and
// the notes say so.
func (s *Sandbox) planCredentials(p *launcher.Plan, c *sessionCreds) []string {
	if c == nil {
		return nil
	}
	notes := slices.Clone(c.notes)
	for _, path := range slices.Sorted(maps.Keys(c.overlays)) {
		if !s.layers.Namespaces {
			notes = append(notes, fmt.Sprintf("sandbox.credentials: %s is masked by a bind mount, which Landlock alone cannot make: it is denied instead (unreadable inside the private home, readable outside it)", path))
			if within(path, p.HomeKept) {
				p.HomeHidden = append(p.HomeHidden, path)
			}
			continue
		}
		p.Overlays = append(p.Overlays, launcher.Overlay{Src: c.overlays[path], Dst: path})
		if p.Home != "" && strings.HasPrefix(path, p.Home+"/") {
			p.HomeKept = append(p.HomeKept, path)
		}
	}
	return notes
}

// withCredentials gives the command its sentinels and takes the masked
// and denied variables out of the caller's environment; where its
// network goes through the proxy, the proxy gets the session's secrets
// and the command the bundle that trusts the proxy's CA.
func (l *Launch) withCredentials(c *sessionCreds, proxied bool, notes []string) {
	if c == nil {
		return
	}
	if !c.noted.Swap(true) {
		l.notes = notes // once per session
	}
	l.Unset = append(l.Unset, c.unset...)
	l.Env = append(l.Env, c.env...)
	if proxied && l.egress != nil && c.inject.CA != nil {
		l.egress.Inject = c.inject
		l.Env = append(l.Env, c.caEnv...)
	}
}

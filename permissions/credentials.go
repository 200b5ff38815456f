package permissions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// This file is the one list of credential paths. The permission check
// refuses reading them unless an allow rule names them; the Bash sandbox's
// namespaces layer masks them. Both read the list below.

// credentialPaths are, relative to the home directory, the files and
// directories that hold credentials: SSH and GnuPG keys, cloud and cluster
// logins, registry and forge tokens.
var credentialPaths = []string{
	".ssh", ".aws", ".gnupg", ".config/gh", ".docker/config.json", ".kube", ".netrc", ".git-credentials",
	".config/gcloud", ".azure", ".pypirc", ".npmrc",
}

// Credentials says where the credential paths of one session are: the
// user's home directory, agent-mcp's own state there, and the session's
// state directory, whose siblings are other sessions' and other tokens'
// state (persisted results, task output).
type Credentials struct {
	// Home is the user's home directory; empty means none is known.
	Home string
	// StateHome is $XDG_STATE_HOME (chat's saved conversations live in
	// its agent-mcp directory); empty means Home/.local/state.
	StateHome string
	// StateDir is the session's own state directory; empty means none.
	StateDir string
	// Files are further secret files, absolute: the server's own token
	// file (--token-file).
	Files []string
}

// sessionPrefix starts the name of every session's state directory
// beneath the state root (tools.NewSession).
const sessionPrefix = "session-"

// Paths lists the credential paths, whether or not they exist, except the
// other sessions' state directories, which are listed as they exist now.
func (c Credentials) Paths() []string {
	var out []string
	if c.Home != "" {
		for _, p := range credentialPaths {
			out = append(out, filepath.Join(c.Home, p))
		}
		out = append(out, c.agentState())
	}
	out = append(out, c.Files...)
	if c.StateDir != "" {
		root := filepath.Dir(filepath.Clean(c.StateDir))
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			p := filepath.Join(root, e.Name())
			if strings.HasPrefix(e.Name(), sessionPrefix) && p != filepath.Clean(c.StateDir) {
				out = append(out, p)
			}
		}
	}
	return out
}

// agentState is agent-mcp's own state directory under the state home
// (chat's conversations).
func (c Credentials) agentState() string {
	sh := c.StateHome
	if sh == "" {
		sh = filepath.Join(c.Home, ".local", "state")
	}
	return filepath.Join(sh, "agent-mcp")
}

// Covers reports whether abs (or a path it resolves to) is a credential
// path or inside one, and names that credential path.
func (c Credentials) Covers(abs string, resolved ...string) (ok bool, what string) {
	for _, p := range append([]string{abs}, resolved...) {
		p = filepath.Clean(p)
		if c.Home != "" {
			for _, cp := range append(slices.Clone(credentialPaths), "") {
				full := c.agentState()
				if cp != "" {
					full = filepath.Join(c.Home, cp)
				}
				if within(p, full) {
					return true, full
				}
			}
		}
		for _, f := range c.Files {
			if within(p, filepath.Clean(f)) {
				return true, filepath.Clean(f)
			}
		}
		if c.StateDir != "" {
			own := filepath.Clean(c.StateDir)
			root := filepath.Dir(own)
			if within(p, root) && !within(p, own) && p != root {
				rel, _ := filepath.Rel(root, p)
				first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
				if strings.HasPrefix(first, sessionPrefix) {
					return true, filepath.Join(root, first)
				}
			}
		}
	}
	return false, ""
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// NamesPathWithin reports whether the rule's path pattern names dir or a
// path beneath it by its literal part: `Read(~/.ssh/**)` and
// `Read(~/.ssh/id_ed25519)` name ~/.ssh, `Read(~/**)` and `Read(//**)` do
// not.
func (r *SourcedRule) NamesPathWithin(dir string) bool {
	if r == nil || r.path == nil {
		return false
	}
	lit := r.path.base
	for _, seg := range strings.Split(r.path.glob, "/") {
		if seg == "**" || seg == "" {
			continue
		}
		if strings.ContainsAny(seg, `*?[\`) {
			break
		}
		lit = filepath.Join(lit, seg)
	}
	return within(filepath.Clean(lit), filepath.Clean(dir))
}

// AllowsCredential returns the allow rule that lets a call read a
// credential path (cred, as [Credentials.Covers] named it) at a: one that
// covers the access and names cred or a path inside it. Wider rules
// (`Read(~/**)`, a whole-tool `Read`, a session grant of a directory above
// it) never do.
func (rs *RuleSet) AllowsCredential(t *Target, a Access, cred string) *SourcedRule {
	for _, r := range rs.Rules(Allow) {
		if r.Whole() || !r.NamesPathWithin(cred) || !r.coversAccess(t, a) || r.isParam(t) {
			continue
		}
		if r.path.match(a.Real, a.IsDir) && r.path.match(a.Path, a.IsDir) {
			return r
		}
	}
	return nil
}

package permit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// credentials are the credential paths of sess (permissions.Credentials):
// the home directory's, agent-mcp's own state, and the other sessions'
// state directories beside sess's.
func (p *Permitter) credentials(sess *tools.Session) permissions.Credentials {
	home := p.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return permissions.Credentials{Home: home, StateHome: p.stateHome, StateDir: sess.StateDir(), Files: p.secretFiles}
}

// refuseCredential is the refusal of a call that reads a credential path
// no allow rule names; nil when the call reads none.
func (p *Permitter) refuseCredential(sess *tools.Session, tg *permissions.Target, rules *permissions.RuleSet) *permissions.Decision {
	creds := p.credentials(sess)
	for _, a := range tg.Accesses {
		if a.Write {
			continue
		}
		ok, cred := creds.Covers(a.Path, a.Real)
		if !ok || rules.AllowsCredential(tg, a, cred) != nil {
			continue
		}
		rule := credentialRule(creds.Home, cred)
		return &permissions.Decision{Behavior: permissions.Deny, Suggestion: rule.String(),
			Reason: fmt.Sprintf("Reading %s is refused: %s holds credentials, which no tool reads unless an allow rule names them (%s).", a.Path, cred, rule)}
	}
	return nil
}

// credentialRule is the allow rule that names cred: `Read(~/.ssh/**)` for
// a directory, `Read(~/.netrc)` for a file.
func credentialRule(home, cred string) permissions.Rule {
	spec := absSpec(cred)
	if home != "" {
		if rel, err := filepath.Rel(home, cred); err == nil && !strings.HasPrefix(rel, "..") {
			spec = "~/" + filepath.ToSlash(rel)
		}
	}
	if st, err := os.Stat(cred); err != nil || st.IsDir() {
		spec += "/**"
	}
	return permissions.Rule{Tool: "Read", Specifier: spec}
}

// skipCredentials wraps a walking tool's check of what to skip below its
// paths (Grep, Glob, LS) so that it skips the credential paths too.
func (p *Permitter) skipCredentials(sess *tools.Session, tg *permissions.Target, rules *permissions.RuleSet, denied func(string, bool) bool) func(string, bool) bool {
	covers := p.credentials(sess).Matcher()
	return func(abs string, isDir bool) bool {
		if denied != nil && denied(abs, isDir) {
			return true
		}
		ok, cred := covers(abs)
		if !ok {
			return false
		}
		return rules.AllowsCredential(tg, permissions.Access{Path: abs, Real: abs, IsDir: isDir}, cred) == nil
	}
}

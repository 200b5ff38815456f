package permissions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// This file is the one list of credential paths. The permission check
// refuses reading them unless an allow rule names them; the Bash sandbox's
// namespaces layer masks them. Both read the list below.

// credentialPaths are, relative to the home directory, the files and
// directories that hold credentials: SSH and GnuPG keys and keyrings; the
// tokens of every host that runs agent-mcp (Claude Code, Codex, Gemini CLI,
// Copilot); cloud and cluster logins; forge, registry and package-manager
// tokens; database password files; browser profiles; and shell and REPL
// histories (a token typed once stays there). A file a tool needs to build
// that may hold a password too (Maven's settings.xml, Gradle's
// gradle.properties) is listed: a build that needs it is given it with a
// Read allow rule naming it.
var credentialPaths = []string{
	// Keys and keyrings.
	".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".local/share/kwalletd", ".pki",
	// The hosts' own tokens.
	".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".config/github-copilot",
	".local/share/opencode/auth.json",
	// Cloud and cluster logins.
	".aws", ".azure", ".config/gcloud", ".oci", ".kube", ".minikube", ".config/doctl", ".s3cfg", ".boto",
	".config/rclone", ".terraform.d/credentials.tfrc.json", ".terraformrc", ".vault-token", ".databrickscfg",
	".dbt/profiles.yml", ".fly", ".config/ngrok", ".ngrok2", ".config/stripe", ".supabase",
	// Forges and containers.
	".config/gh", ".config/hub", ".config/glab-cli", ".netrc", ".git-credentials", ".config/git/credentials",
	".docker/config.json", ".config/containers/auth.json",
	// Package managers and build tools.
	".npmrc", ".yarnrc.yml", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
	".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties", ".composer/auth.json",
	".config/composer/auth.json", ".nuget/NuGet/NuGet.Config", ".config/configstore", ".local/share/uv/credentials",
	// Databases.
	".pgpass", ".my.cnf", ".mylogin.cnf",
	// Browser and mail profiles (cookies, saved passwords).
	".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	// Shell and REPL histories.
	".bash_history", ".zsh_history", ".zhistory", ".histfile", ".local/share/fish/fish_history",
	".python_history", ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history",
	".rediscli_history", ".irb_history", ".lesshst",
}

// credentialDirEnv are the variables that move a directory of
// credentialPaths elsewhere: the entries beneath home-relative dir are
// listed beneath the variable's directory too.
var credentialDirEnv = []struct{ env, dir string }{
	{"XDG_CONFIG_HOME", ".config"}, {"XDG_DATA_HOME", ".local/share"},
	{"GNUPGHOME", ".gnupg"}, {"PASSWORD_STORE_DIR", ".password-store"},
	{"CLAUDE_CONFIG_DIR", ".claude"}, {"CODEX_HOME", ".codex"}, {"GEMINI_CLI_HOME", ".gemini"},
	{"AZURE_CONFIG_DIR", ".azure"}, {"CLOUDSDK_CONFIG", ".config/gcloud"}, {"GH_CONFIG_DIR", ".config/gh"},
	{"DOCKER_CONFIG", ".docker"}, {"CARGO_HOME", ".cargo"}, {"GRADLE_USER_HOME", ".gradle"},
	{"MINIKUBE_HOME", ".minikube"}, {"COMPOSER_HOME", ".config/composer"},
}

// credentialFileEnv are the variables that name a credential file (or,
// KUBECONFIG, a list of them) wherever it is.
var credentialFileEnv = []string{
	"KUBECONFIG", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "GOOGLE_APPLICATION_CREDENTIALS",
	"NPM_CONFIG_USERCONFIG", "npm_config_userconfig", "TF_CLI_CONFIG_FILE", "PGPASSFILE", "MYSQL_TEST_LOGIN_FILE",
	"NETRC", "HISTFILE", "REGISTRY_AUTH_FILE", "RCLONE_CONFIG", "BOTO_CONFIG", "VAULT_CONFIG_PATH",
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
	// Getenv reads the variables that move credential places
	// (KUBECONFIG, XDG_CONFIG_HOME, DOCKER_CONFIG, ...); nil means
	// os.Getenv.
	Getenv func(string) string
}

// places are the credential paths under the home directory and where the
// variables of the server's environment move them (both are listed: a
// tool may read either), absolute and cleaned.
func (c Credentials) places() []string {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	// Each variable is read once: a walk's matcher and every command's
	// masks start here.
	moved := make([]string, len(credentialDirEnv))
	for i, m := range credentialDirEnv {
		moved[i] = getenv(m.env)
	}
	for _, p := range credentialPaths {
		if c.Home != "" {
			add(filepath.Join(c.Home, p))
		}
		for i, m := range credentialDirEnv {
			if v := moved[i]; v != "" && within(p, m.dir) {
				add(filepath.Join(v, strings.TrimPrefix(strings.TrimPrefix(p, m.dir), "/")))
			}
		}
	}
	for _, e := range credentialFileEnv {
		for _, f := range filepath.SplitList(getenv(e)) {
			add(f)
		}
	}
	return out
}

// sessionPrefix starts the name of every session's state directory
// beneath the state root (tools.NewSession).
const sessionPrefix = "session-"

// Paths lists the credential paths, whether or not they exist, except the
// other sessions' state directories, which are listed as they exist now.
func (c Credentials) Paths() []string {
	out := c.places()
	if c.Home != "" {
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
	return c.Matcher()(abs, resolved...)
}

// Matcher is [Credentials.Covers] with the credential places worked out
// once (the variables that move them read now): for a walk that asks
// about every file it passes. The walk's question is answered per
// directory, not per file: a directory that is no credential path, lies
// inside none and holds none clears every name in it, and the matcher
// remembers the last directory it cleared, so a listing's entries cost a
// comparison of their directory each.
func (c Credentials) Matcher() func(abs string, resolved ...string) (ok bool, what string) {
	return c.matcher().covers
}

// matcher works the credential places out for Matcher.
func (c Credentials) matcher() *credMatcher {
	m := &credMatcher{places: c.places()}
	if c.Home != "" {
		m.places = append(m.places, c.agentState())
	}
	m.files = make([]string, len(c.Files))
	for i, f := range c.Files {
		m.files[i] = filepath.Clean(f)
	}
	m.holders = make(map[string]bool, len(m.places)+len(m.files)+1)
	for _, p := range append(slices.Clone(m.places), m.files...) {
		m.holders[filepath.Dir(p)] = true
	}
	if c.StateDir != "" {
		m.own = filepath.Clean(c.StateDir)
		m.root = filepath.Dir(m.own)
		m.holders[m.root] = true
	}
	return m
}

// credMatcher answers [Credentials.Matcher]'s question.
type credMatcher struct {
	// places are the credential directories and files, absolute and
	// cleaned; files the further secret files.
	places, files []string
	// own is the session's state directory and root the directory of all
	// sessions' ("" when there is none).
	own, root string
	// holders are the directories a credential path is directly in: a
	// name listed in one may be a credential path itself.
	holders map[string]bool
	// cleared is the last directory found to hold no credential path,
	// with its trailing slash (shared by a walk's workers; a stale one is
	// only a lost shortcut).
	cleared atomic.Pointer[string]
}

// covers is the matcher [Credentials.Matcher] returns.
func (m *credMatcher) covers(abs string, resolved ...string) (bool, string) {
	if ok, what := m.one(abs); ok {
		return true, what
	}
	for _, r := range resolved {
		if ok, what := m.one(r); ok {
			return true, what
		}
	}
	return false, ""
}

// one is covers for one path.
func (m *credMatcher) one(p string) (bool, string) {
	if last := m.cleared.Load(); last != nil && strings.HasPrefix(p, *last) {
		// A name in the directory cleared last.
		if name := p[len(*last):]; name != "" && name != "." && name != ".." && strings.IndexByte(name, '/') < 0 {
			return false, ""
		}
	}
	if !isCleanAbs(p) {
		p = filepath.Clean(p)
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 && p != "/" {
		dir := p[:max(i, 1)]
		if ok, _ := m.slow(dir); !ok && !m.holders[dir] {
			m.clear(p[:i+1])
			return false, ""
		}
	}
	return m.slow(p)
}

// isCleanAbs reports whether p is an absolute path that filepath.Clean
// leaves as it is: no empty, "." or ".." element, no trailing slash.
func isCleanAbs(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		rest := p[i+1:]
		switch {
		case rest == "" && i > 0, strings.HasPrefix(rest, "/"):
			return false
		case rest == "." || rest == "..", strings.HasPrefix(rest, "./"), strings.HasPrefix(rest, "../"):
			return false
		}
	}
	return true
}

// clear remembers prefix, a cleared directory and its trailing slash, as
// the last directory cleared.
func (m *credMatcher) clear(prefix string) {
	d := strings.Clone(prefix) // it may be a view of a buffer the caller reuses
	m.cleared.Store(&d)
}

// slow reports whether the cleaned path p is a credential path or inside
// one, looking at each.
func (m *credMatcher) slow(p string) (bool, string) {
	for _, full := range m.places {
		if within(p, full) {
			return true, full
		}
	}
	for _, f := range m.files {
		if within(p, f) {
			return true, f
		}
	}
	if m.root != "" && within(p, m.root) && !within(p, m.own) && p != m.root {
		rel, _ := filepath.Rel(m.root, p)
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if strings.HasPrefix(first, sessionPrefix) {
			return true, filepath.Join(m.root, first)
		}
	}
	return false, ""
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	d := strings.TrimSuffix(dir, "/")
	return p == dir || len(p) > len(d) && p[len(d)] == '/' && p[:len(d)] == d
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

package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/agent-mcp/agent-mcp/internal/redact"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/hooks"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/tools/shell"
)

// permissionFlags configure permission rules and hooks.
type permissionFlags struct {
	settings        stringList
	allowedTools    stringList
	disallowedTools stringList
	// strict says nobody but agent-mcp confirms calls (chat), so the
	// trusting-host policy never applies (permissions.DecidePolicy).
	strict bool
	// trustProject trusts the project's own settings (--trust-project).
	trustProject bool

	loaded        *permissionSetup
	loadedProject string
}

func (p *permissionFlags) add(fs *flag.FlagSet) {
	fs.Var(&p.settings, "settings", "a settings file (or a JSON object) read after the standard ones (repeatable)")
	fs.Var(&p.allowedTools, "allowed-tools", `permission rules to allow, comma or space separated, e.g. "Read,Bash(git log *)" (repeatable)`)
	fs.Var(&p.disallowedTools, "disallowed-tools", `permission rules to deny, comma or space separated, e.g. "WebFetch,Bash(rm *)" (repeatable)`)
	fs.BoolVar(&p.trustProject, "trust-project", false, "let the project's own .claude settings widen permissions (allow rules, defaultMode, additionalDirectories, hooks) for this run only, without recording them as trusted (see agent-mcp trust)")
}

// permissionSetup is what the settings and flags make of permissions.
type permissionSetup struct {
	settings *settings.Settings
	policy   permissions.Policy
	permit   *permit.Permitter
	// hooks is nil when no hook is configured.
	hooks *hooks.Runner
	// sandbox confines Bash's commands; nil when off.
	sandbox *sandbox.Sandbox
	// excluded are the commands that run outside it
	// (sandbox.excludedCommands).
	excluded shell.ExcludedCommands
}

// permissionSetup loads the settings of project (once per project) and
// builds the policy, the permitter and the hook runner from them and the
// flags. The user's settings are read from ~/.claude (or
// $CLAUDE_CONFIG_DIR) and $XDG_CONFIG_HOME/agent-mcp (or
// $AGENT_MCP_CONFIG_DIR).
func (w *workspaceFlags) permissionSetup(project string) (*permissionSetup, error) {
	p := &w.perm
	if p.loaded != nil && p.loadedProject == project {
		return p.loaded, nil
	}
	loc := settings.DefaultLocations(project, w.env.configDir)
	loc.Extra = p.settings
	loc.TrustProject = p.trustProject
	s, err := settings.Load(loc)
	if err != nil {
		return nil, err
	}
	flagAnchors := permissions.Anchors{Home: loc.Home, Root: project, Cwd: project}
	for _, f := range []struct {
		name string
		b    permissions.Behavior
		vals []string
	}{{"--disallowed-tools", permissions.Deny, p.disallowedTools}, {"--allowed-tools", permissions.Allow, p.allowedTools}} {
		for _, v := range f.vals {
			rules := permissions.SplitRuleList(v)
			if err := s.AddRules(f.b, rules, f.name, flagAnchors); err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	policy, err := permissions.DecidePolicy(permissions.PolicyInput{ModeFlag: w.mode, SettingsMode: s.DefaultMode, HostConfirms: !p.strict})
	if err != nil {
		return nil, err
	}
	sb, err := w.newSandbox(s, loc.Home)
	if err != nil {
		return nil, err
	}
	pc := permit.Options{Rules: s.Rules, TrustHost: policy.TrustHost, Home: loc.Home, StateHome: stateHome(), SecretFiles: w.secretFiles}
	excluded := shell.ExcludedCommands(s.Sandbox.Excluded)
	if sb != nil && (s.Sandbox.AutoAllow == nil || *s.Sandbox.AutoAllow) {
		pc.Sandbox = bashSandbox{sb: sb, excluded: excluded}
	}
	setup := &permissionSetup{settings: s, policy: policy, permit: permit.New(pc), sandbox: sb, excluded: excluded}
	if len(s.PreToolUse)+len(s.PostToolUse) > 0 {
		r, err := hooks.New(hooks.Options{PreToolUse: s.PreToolUse, PostToolUse: s.PostToolUse, ProjectDir: project})
		if err != nil {
			return nil, err
		}
		setup.hooks = r
	}
	p.loaded, p.loadedProject = setup, project
	return setup, nil
}

// addDirs appends the settings' additionalDirectories that exist to dirs.
func (s *permissionSetup) addDirs(dirs []string) []string {
	for _, d := range s.settings.AdditionalDirectories {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// wire puts the permitter, the hooks, the pool filter and the result
// redactor (the environment's secrets and the further ones given) on a
// pipeline being built.
func (s *permissionSetup) wire(p *orchestrator.Pipeline, secrets ...redact.Secret) {
	p.Permit = s.permit
	p.Redact = resultRedactor(append(secrets, credentialSecrets(s.settings)...)...).WithPatterns(redactPatterns(s.settings))
	if s.hooks != nil {
		p.Hooks = s.hooks
	}
}

// warnIgnored says on w, once, one plain line each, the workspace
// settings left out because the workspace is not trusted, and the
// settings keys nobody knows (a misspelt "permisions" would otherwise
// drop its rules without a word).
func (s *permissionSetup) warnIgnored(w io.Writer) {
	for _, msg := range s.settings.Ignored {
		fmt.Fprintf(w, "agent-mcp: warning: workspace settings ignored: %s\n", msg)
	}
	for _, msg := range s.settings.Unknown {
		fmt.Fprintf(w, "agent-mcp: warning: %s\n", msg)
	}
	for _, msg := range s.settings.Sandbox.Warnings {
		fmt.Fprintf(w, "agent-mcp: warning: %s\n", msg)
	}
}

// filter is the pool filter: tools denied as a whole are not listed.
func (s *permissionSetup) filter() orchestrator.Filter { return s.permit.Filter() }

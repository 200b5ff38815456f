package cli

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/tools/shell"
)

// TestReadEnviron: each AGENT_MCP_* variable the packages below take as
// an option is read here, and unset ones leave the defaults.
func TestReadEnviron(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  map[string]string
		want environ
	}{
		{"unset", nil, environ{}},
		{"all", map[string]string{
			configDirEnv: "/cfg", shell.DisableBackgroundEnv: "Yes", sandbox.LayersEnv: "Landlock,cgroup",
			sandbox.HostsEnv: "a.test=127.0.0.1",
		}, environ{configDir: "/cfg", disableBackground: true, layers: []string{"landlock", "cgroup"}, hosts: "a.test=127.0.0.1"}},
		{"layers set empty is none", map[string]string{sandbox.LayersEnv: ""}, environ{layers: []string{""}}},
		{"background not a true value", map[string]string{shell.DisableBackgroundEnv: "0"}, environ{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []string{configDirEnv, shell.DisableBackgroundEnv, sandbox.LayersEnv, sandbox.HostsEnv} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			for k, v := range tt.set {
				t.Setenv(k, v)
			}
			got := readEnviron()
			if got.configDir != tt.want.configDir || got.disableBackground != tt.want.disableBackground ||
				got.hosts != tt.want.hosts || !slices.Equal(got.layers, tt.want.layers) || (got.layers == nil) != (tt.want.layers == nil) {
				t.Errorf("readEnviron() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestToolOptions_background_off: $AGENT_MCP_DISABLE_BACKGROUND_TASKS
// reaches Bash as its option.
func TestToolOptions_background_off(t *testing.T) {
	t.Setenv(shell.DisableBackgroundEnv, "1")
	fs := newFlagSet("serve", "serve", "", nil, nil)
	var w workspaceFlags
	w.add(fs.FlagSet)
	opts, err := w.toolOptions()
	if err != nil || !opts.DisableBackground {
		t.Errorf("toolOptions() = DisableBackground %v, %v; want true", opts.DisableBackground, err)
	}
}

// TestSandboxConfig_facts: the policy the sandbox applies is decided
// here and handed over as facts: the permission package's credential and
// protected paths, the pinned configuration directories, and the
// environment's hosts and layers.
func TestSandboxConfig_facts(t *testing.T) {
	t.Parallel()
	home, root, states := t.TempDir(), t.TempDir(), t.TempDir()
	own, other := filepath.Join(states, "session-own"), filepath.Join(states, "session-other")
	for _, d := range []string{own, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	token := filepath.Join(t.TempDir(), "token")
	w := workspaceFlags{secretFiles: []string{token}, env: environ{
		configDir: filepath.Join(home, "cfg"), layers: []string{"landlock"}, hosts: "A.test=127.0.0.1",
	}}
	s := &settings.Settings{Rules: &permissions.RuleSet{}}
	opts, err := w.sandboxOptions(s, home)
	if err != nil {
		t.Fatal(err)
	}
	creds := opts.Credentials(own)
	for _, want := range []string{filepath.Join(home, ".ssh"), token, other} {
		if !slices.Contains(creds, want) {
			t.Errorf("Credentials(%s) = %v: no %s", own, creds, want)
		}
	}
	if slices.Contains(creds, own) {
		t.Errorf("Credentials(%s) lists the command's own state", own)
	}
	if want := permissions.SandboxReadOnlyPaths([]string{root}, home); !slices.Equal(opts.Protected([]string{root}), want) {
		t.Errorf("Protected = %v, want %v", opts.Protected([]string{root}), want)
	}
	if !slices.Contains(opts.Protected([]string{root}), filepath.Join(root, ".git", "hooks")) {
		t.Errorf("Protected = %v: no .git/hooks", opts.Protected([]string{root}))
	}
	if !slices.Contains(opts.Pinned, filepath.Join(home, "cfg")) {
		t.Errorf("Pinned = %v: not $AGENT_MCP_CONFIG_DIR", opts.Pinned)
	}
	if opts.Hosts["a.test"] != netip.MustParseAddr("127.0.0.1") || !slices.Equal(opts.AllowedLayers, []string{"landlock"}) {
		t.Errorf("Hosts %v, AllowedLayers %v", opts.Hosts, opts.AllowedLayers)
	}

	w.env.hosts = "a.test"
	if _, err := w.sandboxOptions(s, home); err == nil || !strings.Contains(err.Error(), sandbox.HostsEnv) {
		t.Errorf("a bad %s: %v", sandbox.HostsEnv, err)
	}
	w.sandbox = "off"
	if _, err := w.sandboxOptions(s, home); err != nil {
		t.Errorf("a bad %s with the sandbox off: %v", sandbox.HostsEnv, err)
	}
}

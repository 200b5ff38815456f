package permit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
	"github.com/agent-mcp/agent-mcp/tools/search"
)

// TestDecide_credentialsRefusedUnlessNamed: Read, Grep, Glob, LS and a
// Bash line that reads a credential path, or another session's state, are
// refused in every mode, with the rule to add named; an allow rule naming
// the path lets them read it, a wider one does not.
func TestDecide_credentialsRefusedUnlessNamed(t *testing.T) {
	t.Parallel()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".ssh/id_ed25519", ".aws/credentials", ".netrc", ".config/gh/hosts.yml", "notes.txt", ".claude/.credentials.json", ".claude/settings.json", ".codex/auth.json", ".bash_history"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, p), []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name     string
		mode     permissions.Mode
		allow    []string
		tool     *tools.Tool
		input    string
		want     permissions.Behavior
		wantRule string
	}{
		{"Read of a key", permissions.ModeBypassPermissions, nil, fs.Read(), `{"file_path": "~/.ssh/id_ed25519"}`, permissions.Deny, "Read(~/.ssh/**)"},
		{"Read of .netrc", permissions.ModeBypassPermissions, nil, fs.Read(), `{"file_path": "~/.netrc"}`, permissions.Deny, "Read(~/.netrc)"},
		{"Grep in .aws", permissions.ModeBypassPermissions, nil, search.Grep(), `{"pattern": "k", "path": "~/.aws"}`, permissions.Deny, "Read(~/.aws/**)"},
		{"Glob in gh", permissions.ModeBypassPermissions, nil, search.Glob(), `{"pattern": "*", "path": "~/.config/gh"}`, permissions.Deny, "Read(~/.config/gh/**)"},
		{"LS of .ssh", permissions.ModeBypassPermissions, nil, fs.LS(), `{"path": "~/.ssh"}`, permissions.Deny, "Read(~/.ssh/**)"},
		{"Bash cat of a key", permissions.ModeBypassPermissions, nil, bashTool, `{"command": "cat ~/.ssh/id_ed25519"}`, permissions.Deny, "Read(~/.ssh/**)"},
		{"Read under a whole-home rule", permissions.ModeDefault, []string{"Read(~/**)"}, fs.Read(), `{"file_path": "~/.ssh/id_ed25519"}`, permissions.Deny, "Read(~/.ssh/**)"},
		{"Read under a whole Read rule", permissions.ModeDefault, []string{"Read"}, fs.Read(), `{"file_path": "~/.ssh/id_ed25519"}`, permissions.Deny, "Read(~/.ssh/**)"},
		{"Read under a rule naming it", permissions.ModeDefault, []string{"Read(~/.ssh/**)"}, fs.Read(), `{"file_path": "~/.ssh/id_ed25519"}`, permissions.Allow, ""},
		{"Bash under a rule naming it", permissions.ModeDefault, []string{"Read(~/.ssh/**)"}, bashTool, `{"command": "cat ~/.ssh/id_ed25519"}`, permissions.Allow, ""},
		{"Read of Claude Code's token", permissions.ModeBypassPermissions, nil, fs.Read(), `{"file_path": "~/.claude/.credentials.json"}`, permissions.Deny, "Read(~/.claude/.credentials.json)"},
		{"Grep for Codex's token", permissions.ModeBypassPermissions, nil, search.Grep(), `{"pattern": "k", "path": "~/.codex/auth.json"}`, permissions.Deny, "Read(~/.codex/auth.json)"},
		{"Read of the shell's history", permissions.ModeBypassPermissions, nil, fs.Read(), `{"file_path": "~/.bash_history"}`, permissions.Deny, "Read(~/.bash_history)"},
		{"Read of Claude Code's settings", permissions.ModeBypassPermissions, nil, fs.Read(), `{"file_path": "~/.claude/settings.json"}`, permissions.Allow, ""},
		{"Read of an ordinary file in home", permissions.ModeBypassPermissions, nil, fs.Read(), `{"file_path": "~/notes.txt"}`, permissions.Allow, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.mode)
			s := &settings.Settings{Rules: &permissions.RuleSet{}}
			if err := s.AddRules(permissions.Allow, tt.allow, "test", permissions.Anchors{Home: home, Root: f.dir, Cwd: f.dir}); err != nil {
				t.Fatal(err)
			}
			p := New(Options{Rules: s.Rules, Home: home})
			d := f.decide(t, p, tt.tool, strings.ReplaceAll(tt.input, "~", home), nil, permissions.Decision{})
			if d.Behavior != tt.want {
				t.Fatalf("got %s (%s), want %s", d.Behavior, d.Reason, tt.want)
			}
			if tt.wantRule != "" && (d.Suggestion != tt.wantRule || !strings.Contains(d.Reason, tt.wantRule)) {
				t.Errorf("the refusal does not name %s: %q (suggestion %q)", tt.wantRule, d.Reason, d.Suggestion)
			}
		})
	}

	t.Run("another session's state", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, permissions.ModeBypassPermissions)
		other, err := tools.NewSession(tools.SessionOptions{Cwd: f.dir, StateRoot: filepath.Dir(f.sess.StateDir())})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		theirs := filepath.Join(other.StateDir(), "x.txt")
		ours := filepath.Join(f.sess.StateDir(), "x.txt")
		for _, p := range []string{theirs, ours} {
			if err := os.WriteFile(p, []byte("r"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		p := New(Options{Home: home})
		if d := f.decide(t, p, fs.Read(), `{"file_path": "`+theirs+`"}`, nil, permissions.Decision{}); d.Behavior != permissions.Deny {
			t.Errorf("reading another session's state: %s (%s)", d.Behavior, d.Reason)
		}
		if d := f.decide(t, p, bashTool, `{"command": "cat `+theirs+`"}`, nil, permissions.Decision{}); d.Behavior != permissions.Deny {
			t.Errorf("cat of another session's state: %s (%s)", d.Behavior, d.Reason)
		}
		if d := f.decide(t, p, fs.Read(), `{"file_path": "`+ours+`"}`, nil, permissions.Decision{}); d.Behavior != permissions.Allow {
			t.Errorf("reading the session's own state: %s (%s)", d.Behavior, d.Reason)
		}
	})

	t.Run("a walk skips them", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, permissions.ModeBypassPermissions)
		p := New(Options{Home: home})
		d := f.decide(t, p, search.Grep(), `{"pattern": "k", "path": "`+home+`"}`, nil, permissions.Decision{})
		if d.Behavior != permissions.Allow || d.ReadDenied == nil {
			t.Fatalf("Grep over home: %s (%s)", d.Behavior, d.Reason)
		}
		if !d.ReadDenied(filepath.Join(home, ".ssh"), true) || !d.ReadDenied(filepath.Join(home, ".netrc"), false) {
			t.Error("Grep over home does not skip the credential paths")
		}
		if d.ReadDenied(filepath.Join(home, "notes.txt"), false) {
			t.Error("Grep over home skips an ordinary file")
		}
	})
}

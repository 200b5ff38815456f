package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCredentialMasks: every existing credential path the configuration
// lists for the command's state directory is masked (other sessions'
// state beside the command's own is one); one a Read allow rule names
// wholly is not, and one a rule names in part keeps only that part.
func TestCredentialMasks(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	for _, p := range []string{".ssh/id_ed25519", ".ssh/known_hosts", ".aws/credentials", ".netrc", ".kube/config", "notes.txt",
		".local/state/agent-mcp/conversations/c.json"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, p), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	own, other := filepath.Join(state, "session-own"), filepath.Join(state, "session-other")
	for _, d := range []string{own, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name  string
		allow []Pattern
		want  []string
	}{
		{"no rule", nil, []string{".ssh", ".aws", ".kube", ".netrc", ".local/state/agent-mcp", "OTHER"}},
		{"a rule naming .ssh wholly", []Pattern{{Base: home, Glob: ".ssh/**"}}, []string{".aws", ".kube", ".netrc", ".local/state/agent-mcp", "OTHER"}},
		{"a rule naming a file in .ssh", []Pattern{{Base: home, Glob: ".ssh/known_hosts"}}, []string{".ssh/id_ed25519", ".aws", ".kube", ".netrc", ".local/state/agent-mcp", "OTHER"}},
		{"a rule naming .netrc", []Pattern{{Base: home, Glob: ".netrc"}}, []string{".ssh", ".aws", ".kube", ".local/state/agent-mcp", "OTHER"}},
		{"a whole-home rule names none", []Pattern{{Base: home, Glob: "**"}}, []string{".ssh", ".aws", ".kube", ".netrc", ".local/state/agent-mcp", "OTHER"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			creds := func(stateDir string) []string {
				if stateDir != own {
					t.Errorf("Credentials asked for %s, not the command's state directory %s", stateDir, own)
				}
				var out []string
				for _, p := range []string{".ssh", ".aws", ".gnupg", ".kube", ".netrc", ".local/state/agent-mcp"} {
					out = append(out, filepath.Join(home, p))
				}
				return append(out, other)
			}
			s := &Sandbox{opts: Options{Home: home, ReadAllow: tt.allow, Credentials: creds}}
			got := s.credentialMasks(own, nil)
			var want []string
			for _, w := range tt.want {
				if w == "OTHER" {
					want = append(want, other)
				} else {
					want = append(want, filepath.Join(home, w))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("masks %v, want %v", got, want)
			}
		})
	}
}

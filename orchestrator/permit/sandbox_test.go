package permit

import (
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions"
)

// layerSandbox stands for Bash's kernel sandbox with one set of layers:
// holds is whether the namespaces layer is among them, openNet whether
// the network is unrestricted (sandbox.network true).
type layerSandbox struct{ holds, openNet bool }

func (layerSandbox) Confines(string) bool { return true }
func (layerSandbox) Excluded(string) bool { return false }
func (s layerSandbox) HoldsPaths() bool   { return s.holds }
func (s layerSandbox) HoldsNetwork() bool { return !s.openNet }

// TestDecide_sandboxWaivesOnlyWritesInside is the policy per layer: the
// sandbox waives a question only for what the kernel holds, a command's
// writes inside the working directories with the namespaces layer (and a
// command that cannot be analysed, when no Bash deny or ask rule could
// have matched it). Reads outside the working directories and writes the
// parser cannot place are asked about as without a sandbox, and with a
// Bash deny or ask rule an unanalysable command is asked about too.
func TestDecide_sandboxWaivesOnlyWritesInside(t *testing.T) {
	t.Parallel()
	const A, Q, D = permissions.Allow, permissions.Ask, permissions.Deny
	type want struct{ none, landlock, namespaces, namespacesOpenNet permissions.Behavior }
	for _, tt := range []struct {
		name    string
		command string
		deny    []string
		ask     []string
		want    want
	}{
		{"a write inside", "cp a b", nil, nil, want{Q, Q, A, Q}},
		{"a program no rule allows, inside", "make build", nil, nil, want{Q, Q, A, Q}},
		{"a read outside", "cat %O/secret.txt", nil, nil, want{Q, Q, Q, Q}},
		{"a read of a credential file", "cat ~/.ssh/id_ed25519", nil, nil, want{D, D, D, D}},
		{"a redirected read outside", "cat < ../outside/secret.txt", nil, nil, want{Q, Q, Q, Q}},
		{"a read in $(< f) outside", `echo "$(< %O/secret.txt)"`, nil, nil, want{Q, Q, Q, Q}},
		{"a write outside", "cp a %O/b", nil, nil, want{Q, Q, Q, Q}},
		{"a write to a computed path", `echo x > "$(dirname "$PWD")/outside/w"`, nil, nil, want{Q, Q, Q, Q}},
		{"a read of a computed path", `cat "$HOME/x"`, nil, nil, want{Q, Q, Q, Q}},
		{"a computed program, no Bash rule", "${X:-rm} x", nil, nil, want{Q, Q, A, Q}},
		{"a computed program under a deny rule", "${X:-rm} x", []string{"Bash(rm *)"}, nil, want{Q, Q, Q, Q}},
		{"a computed program under an ask rule", "${X:-rm} x", nil, []string{"Bash(touch *)"}, want{Q, Q, Q, Q}},
		{"a globbed program under a deny rule", "/bin/r? x", []string{"Bash(rm *)"}, nil, want{Q, Q, Q, Q}},
		{"a line that does not parse under a deny rule", "echo 'x", []string{"Bash(rm *)"}, nil, want{Q, Q, Q, Q}},
		{"an ask rule", "touch a", nil, []string{"Bash(touch *)"}, want{Q, Q, Q, Q}},
	} {
		for _, layer := range []struct {
			name string
			sb   Sandbox
			want permissions.Behavior
		}{
			{"no sandbox", nil, tt.want.none},
			{"landlock alone", layerSandbox{holds: false}, tt.want.landlock},
			{"namespaces", layerSandbox{holds: true}, tt.want.namespaces},
			{"namespaces, network unrestricted", layerSandbox{holds: true, openNet: true}, tt.want.namespacesOpenNet},
		} {
			t.Run(tt.name+"/"+layer.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, permissions.ModeDefault)
				p := New(Options{Rules: rules(t, f.dir, tt.deny, tt.ask, nil), Sandbox: layer.sb})
				input := `{"command": ` + quoteJSON(strings.NewReplacer("%O", f.outside).Replace(tt.command)) + `}`
				d := f.decide(t, p, bashTool, input, nil, permissions.Decision{})
				if d.Behavior != layer.want {
					t.Fatalf("%s: got %s (%s), want %s", input, d.Behavior, d.Reason, layer.want)
				}
			})
		}
	}
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

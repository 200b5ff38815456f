package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// TestSettings_errors_name_the_file_position: a settings file of the
// wrong shape is refused naming the file, the line and column and the key
// as the file spells it (not a Go struct field), and a key nobody knows is
// a plain `agent-mcp: warning:` line, not a log record.
func TestSettings_errors_name_the_file_position(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		fails      bool
		want       []string
		notWant    []string
	}{
		{"wrong type", "{\n  \"permissions\": {\n    \"allow\": \"Bash\"\n  }\n}\n", true,
			[]string{"settings.json:3:14: permissions.allow: expected an array of strings, got a string"},
			[]string{"Go struct", "[]string"}},
		{"bad syntax", "{\n  \"permissions\": {\n    \"allow\": [\"Bash\",]\n  }\n}\n", true,
			[]string{"settings.json:3:22: "}, nil},
		{"unknown key", "{\n  \"permisions\": {}\n}\n", false,
			[]string{"agent-mcp: warning: settings ", "unknown key 'permisions', ignored (did you mean 'permissions'?)"},
			[]string{"time=", "level=WARN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "serve", "--cwd", dir, "--state-dir", t.TempDir(), "--trust-project")
			cmd.Env = testbin.HermeticEnv(t)
			out, err := cmd.CombinedOutput() // stdin /dev/null: serve ends at once
			if (err != nil) != tc.fails {
				t.Fatalf("err %v, want failure %v:\n%s", err, tc.fails, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(string(out), w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

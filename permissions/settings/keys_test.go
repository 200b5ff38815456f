package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestUnknownKeysNamed: a misspelt key in a settings file is named, with
// the closest known key, instead of being ignored without a word; Claude
// Code's own keys, which agent-mcp does not read, are not.
func TestUnknownKeysNamed(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(project, ".claude", "settings.json")
	content := `{"permisions": {"deny": ["Bash(rm *)"]}, "permissions": {"alow": ["Read"], "deny": []},
		"theme": "dark", "env": {"A": "1"}, "model": "x", "zzzzzzzzzz": 1}`
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(Locations{Home: t.TempDir(), ConfigDir: t.TempDir(), Project: project, TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"settings " + file + `: unknown key 'permisions', ignored (did you mean 'permissions'?)`,
		"settings " + file + `: unknown key 'zzzzzzzzzz', ignored`,
		"settings " + file + `: unknown key 'permissions.alow', ignored (did you mean 'permissions.allow'?)`,
	}
	if !slices.Equal(s.Unknown, want) {
		t.Errorf("Unknown =\n%s\nwant\n%s", strings.Join(s.Unknown, "\n"), strings.Join(want, "\n"))
	}
}

// TestKeysAgentMCPReadsAreKnown: every key File reads is a known one, so
// a correct file is never reported.
func TestKeysAgentMCPReadsAreKnown(t *testing.T) {
	t.Parallel()
	check := func(typ reflect.Type, known []string, where string) {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !slices.Contains(known, name) {
				t.Errorf("%s key %q is read by agent-mcp but not in the known keys", where, name)
			}
		}
	}
	typ := reflect.TypeFor[File]()
	check(typ, slices.Concat(claudeCodeKeys, agentMCPKeys), "top-level")
	perm, _ := typ.FieldByName("Permissions")
	check(perm.Type, permissionKeys, "permissions")
}

func TestClosest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ word, want string }{
		{"permisions", "permissions"},
		{"Permissions", "permissions"},
		{"sandbx", "sandbox"},
		{"xyz", ""},
		{"hooks", "hooks"},
	} {
		if got := Closest(tc.word, []string{"permissions", "sandbox", "hooks", "model"}); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

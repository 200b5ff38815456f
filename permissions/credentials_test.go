package permissions

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestCredentials_Covers: every host's own tokens, the credential files a
// developer's machine holds beyond keys (cargo, terraform, maven, vault,
// database passwords, keyrings, histories) are covered; the variables that
// move a place move the coverage with it (the home's place stays covered
// too), and a moved place inside a working directory is covered there; a
// toolchain's ordinary files beside them are not.
func TestCredentials_Covers(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"KUBECONFIG":                  "/work/proj/kubeconfig:/etc/kube/admin.conf",
		"AWS_SHARED_CREDENTIALS_FILE": "/srv/aws/creds",
		"DOCKER_CONFIG":               "/srv/docker",
		"XDG_CONFIG_HOME":             "/cfg",
		"CARGO_HOME":                  "/opt/cargo",
		"CLAUDE_CONFIG_DIR":           "/srv/claude",
		"HISTFILE":                    "relative/history",
	}
	c := Credentials{Home: "/home/u", Getenv: func(k string) string { return env[k] }}
	for _, tt := range []struct {
		path string
		want string // the credential path named; "" when not covered
	}{
		{"/home/u/.claude/.credentials.json", "/home/u/.claude/.credentials.json"},
		{"/home/u/.codex/auth.json", "/home/u/.codex/auth.json"},
		{"/home/u/.gemini/oauth_creds.json", "/home/u/.gemini/oauth_creds.json"},
		{"/home/u/.cargo/credentials.toml", "/home/u/.cargo/credentials.toml"},
		{"/home/u/.terraform.d/credentials.tfrc.json", "/home/u/.terraform.d/credentials.tfrc.json"},
		{"/home/u/.m2/settings-security.xml", "/home/u/.m2/settings-security.xml"},
		{"/home/u/.m2/settings.xml", "/home/u/.m2/settings.xml"},
		{"/home/u/.vault-token", "/home/u/.vault-token"},
		{"/home/u/.pgpass", "/home/u/.pgpass"},
		{"/home/u/.my.cnf", "/home/u/.my.cnf"},
		{"/home/u/.local/share/keyrings/login.keyring", "/home/u/.local/share/keyrings"},
		{"/home/u/.bash_history", "/home/u/.bash_history"},
		{"/home/u/.zsh_history", "/home/u/.zsh_history"},
		{"/home/u/.config/gh/hosts.yml", "/home/u/.config/gh"},
		// Moved by the environment.
		{"/work/proj/kubeconfig", "/work/proj/kubeconfig"},
		{"/etc/kube/admin.conf", "/etc/kube/admin.conf"},
		{"/srv/aws/creds", "/srv/aws/creds"},
		{"/srv/docker/config.json", "/srv/docker/config.json"},
		{"/cfg/gh/hosts.yml", "/cfg/gh"},
		{"/cfg/gcloud/credentials.db", "/cfg/gcloud"},
		{"/opt/cargo/credentials.toml", "/opt/cargo/credentials.toml"},
		{"/srv/claude/.credentials.json", "/srv/claude/.credentials.json"},
		// Not credentials.
		{"/home/u/.cargo/registry/index", ""},
		{"/home/u/.m2/repository/x.jar", ""},
		{"/home/u/.claude/settings.json", ""},
		{"/home/u/.gitconfig", ""},
		{"/opt/cargo/bin/cargo", ""},
		{"/srv/docker/contexts", ""},
		{"/work/proj/main.go", ""},
		{"relative/history", ""},
	} {
		ok, what := c.Covers(tt.path)
		if ok != (tt.want != "") || what != tt.want {
			t.Errorf("Covers(%s) = %v, %q; want %q", tt.path, ok, what, tt.want)
		}
	}
	// Through a link: the path it resolves to counts.
	if ok, what := c.Covers("/work/proj/link", filepath.Join("/home/u", ".codex", "auth.json")); !ok || what != "/home/u/.codex/auth.json" {
		t.Errorf("Covers through a link = %v, %q", ok, what)
	}
}

// TestCredentials_Matcher_answers_per_directory_as_per_path: the matcher a
// walk reuses, which clears whole directories, answers every path of a
// walk-like sequence (names beside credential paths, inside them, in the
// sessions' directory, the secret files, back and forth between
// directories, from several goroutines at once) as holding each
// credential place against that path alone does.
func TestCredentials_Matcher_answers_per_directory_as_per_path(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KUBECONFIG": "/work/proj/kubeconfig", "XDG_CONFIG_HOME": "/cfg"}
	c := Credentials{Home: "/home/u", StateDir: "/state/session-a", Files: []string{"/srv/token"},
		Getenv: func(k string) string { return env[k] }}
	var paths []string
	for _, dir := range []string{"/work/proj", "/work/proj/sub", "/home/u", "/home/u/src", "/home/u/.ssh",
		"/home/u/.ssh/keys", "/cfg", "/cfg/gh", "/cfg/other", "/state", "/state/session-a", "/state/session-b",
		"/state/session-b/out", "/state/other", "/srv", "/home/u/.local/state", "/home/u/.local/state/agent-mcp", "/"} {
		for _, name := range []string{"main.go", "kubeconfig", ".ssh", "id_ed25519", "gh", "token", "session-b", "agent-mcp", "x"} {
			paths = append(paths, filepath.Join(dir, name), dir)
		}
	}
	// Paths that are not clean, in a directory cleared before.
	paths = append(paths, "/home/u/src/main.go", "/home/u/src/../.ssh/id_ed25519", "/home/u/src/main.go", "/home/u/src/..",
		"/home/u/src/main.go", "/home/u/src/./x", "/home/u/src//x", "/home/u/src/main.go", "/home/u/src/../.ssh", "/home/u/src/")
	ref := func(p string) (bool, string) {
		return c.matcher().slow(filepath.Clean(p)) // each credential place held against p alone
	}
	want := make([]string, len(paths))
	for i, p := range paths {
		if ok, what := ref(p); ok {
			want[i] = what
		}
	}
	for _, p := range []string{"/home/u/src/../.ssh/id_ed25519", "/home/u/.ssh/id_ed25519", "/state/session-b/out/x", "/srv/token", "/work/proj/kubeconfig", "/cfg/gh/x"} {
		if ok, _ := ref(p); !ok {
			t.Fatalf("the reference does not cover %s: the table tests nothing", p)
		}
	}
	covers := c.Matcher()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 3 * len(paths) {
				i := (k*(g+1) + g) % len(paths)
				ok, what := covers(paths[i])
				if ok != (want[i] != "") || what != want[i] {
					t.Errorf("matcher(%s) = %v, %q after its walk; alone it is %q", paths[i], ok, what, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkCredentials_Matcher is a walk's check of one directory's
// entries (names that are no credential path, the common case).
func BenchmarkCredentials_Matcher(b *testing.B) {
	covers := Credentials{Home: "/home/u", StateDir: "/state/session-a"}.Matcher()
	names := make([]string, 64)
	for i := range names {
		names[i] = filepath.Join("/home/u/src/go/src/net/http", fmt.Sprintf("file%d.go", i))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if ok, _ := covers(names[i%len(names)]); ok {
			b.Fatal("covered")
		}
	}
}

// TestIsCleanAbs: the shortcut agrees with filepath.Clean on paths that are
// clean, and on each way one is not.
func TestIsCleanAbs(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/", "/a", "/a/b.go", "/a/.b", "/a/..b", "/a/b..", "/.x/y", "//", "/a/", "/a//b",
		"/a/./b", "/a/../b", "/a/.", "/a/..", "/.", "/..", "a", "a/b", "", "./a", "/a/b/"} {
		if got, want := isCleanAbs(p), filepath.IsAbs(p) && filepath.Clean(p) == p; got != want {
			t.Errorf("isCleanAbs(%q) = %v, want %v", p, got, want)
		}
	}
}

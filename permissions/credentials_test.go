package permissions

import (
	"path/filepath"
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

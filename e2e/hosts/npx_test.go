package hosts

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestClaudeCode_npx: the npm channel as a Claude Code user meets it. The
// npm packages are built from the test binary by packaging/npm/build.mjs
// (the wrapper agent-mcp and this machine's @agent-mcp/<os>-<cpu>), installed
// from their tarballs into the project with the npm registry unreachable,
// and registered the way docs/install.md says, `claude mcp add agent-mcp --
// npx -y agent-mcp serve`; `claude mcp list` must show it connected, which
// takes an initialize answered through npx, the launcher and the binary.
func TestClaudeCode_npx(t *testing.T) {
	t.Parallel()
	exe, dir := host(t, "claude")
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to build and install the npm packages: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	home, ws := t.TempDir(), workspace(t)
	offline := []string{"npm_config_registry=http://127.0.0.1:9/", "npm_config_offline=true",
		"npm_config_cache=" + filepath.Join(t.TempDir(), "npm-cache"), "npm_config_audit=false", "npm_config_fund=false",
		"npm_config_update_notifier=false"}
	env := hostEnv(dir, home, offline...)

	// A GoReleaser dist folder holding only this machine's binary.
	out, err := exec.Command(binary, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^agent-mcp (\S+) \(commit \S+\)\n$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("agent-mcp --version printed %q, want agent-mcp VERSION (commit COMMIT)", out)
	}
	version := m[1]
	dist, pkgs := t.TempDir(), t.TempDir()
	writeJSON := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dist, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON("metadata.json", map[string]string{"version": version})
	writeJSON("artifacts.json", []map[string]string{{"type": "Binary", "goos": runtime.GOOS, "goarch": runtime.GOARCH, "path": binary}})
	platform := map[string]string{"windows": "win32"}[runtime.GOOS]
	if platform == "" {
		platform = runtime.GOOS
	}
	platform += "-" + map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	// Packing gzips the binary: minutes on a loaded 2-core machine.
	const packLimit = 5 * time.Minute
	run := func(limit time.Duration, dir, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(packLimit, root, "node", filepath.Join(root, "packaging", "npm", "build.mjs"), dist, pkgs)
	if err := os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"private": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run(packLimit, ws, npm, "install", "--loglevel=error",
		filepath.Join(pkgs, "tarballs", "agent-mcp-"+version+".tgz"),
		filepath.Join(pkgs, "tarballs", "agent-mcp-"+platform+"-"+version+".tgz"))

	run(hostRunLimit, ws, exe, "mcp", "add", "agent-mcp", "--", "npx", "-y", "agent-mcp", "serve", "--state-dir", t.TempDir())
	list := run(hostRunLimit, ws, exe, "mcp", "list")
	line := regexp.MustCompile(`(?m)^agent-mcp: npx -y agent-mcp serve.*$`).FindString(list)
	if line == "" || !strings.Contains(line, "Connected") || strings.Contains(line, "Failed") {
		t.Fatalf("claude mcp list does not show agent-mcp connected through npx:\n%s", list)
	}
	t.Logf("%s", line)
}

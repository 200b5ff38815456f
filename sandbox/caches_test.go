package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cacheEnv clears the variables that move the caches, and points go's env
// file at file (empty: none).
func cacheEnv(t *testing.T, file string) {
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "XDG_CACHE_HOME", "npm_config_cache", "PIP_CACHE_DIR", "CARGO_HOME"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	if file == "" {
		file = filepath.Join(t.TempDir(), "none")
	}
	t.Setenv("GOENV", file)
}

func TestBuildCaches_read_go_env_file_and_point_tools_at_stand_ins(t *testing.T) {
	dir := t.TempDir()
	goenv := filepath.Join(dir, "goenv")
	if err := os.WriteFile(goenv, []byte("GOFLAGS=-buildvcs=false\nGOMODCACHE=\"/m c\"\nGOPROXY=https://p.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheEnv(t, goenv)
	t.Setenv("GOCACHE", "/env/gocache")
	b := newBuildCaches(Options{Home: "/h", CacheRoot: filepath.Join(dir, "root"), Launcher: "/opt/agent mcp/agent-mcp"})
	wantUser := []string{"/env/gocache", "/m c", "/h/.npm", "/h/.cache/pip", "/h/.cargo/registry", "/h/.cargo/git"}
	if !slices.Equal(b.user, wantUser) {
		t.Errorf("user caches = %q, want %q", b.user, wantUser)
	}
	env := b.env("/s")
	want := []string{"GOCACHE=/s/go-build", "GOCACHEPROG='/opt/agent mcp/agent-mcp' __sandbox gocache /env/gocache /s/go-build", "GOMODCACHE=/s/go-mod",
		"GOPROXY=file:///m%20c/cache/download,https://p.example", "GOFLAGS=-buildvcs=false -modcacherw",
		"npm_config_cache=/s/npm", "PIP_CACHE_DIR=/s/pip", "CARGO_HOME=/s/cargo"}
	if !slices.Equal(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}
	if b.env("") != nil {
		t.Error("no stand-in, yet variables")
	}
	// A path GOCACHEPROG cannot quote: no program, and none of the
	// user's either.
	if env := strings.Join(b.env(`/s'"`), " "); !strings.Contains(env, "GOCACHEPROG= ") {
		t.Errorf("env = %s, want GOCACHEPROG empty", env)
	}
}

func TestBuildCaches_setting_picks_the_stand_ins(t *testing.T) {
	cacheEnv(t, "")
	// Only Go's module cache, and a directory no variable moves: the
	// latter is only kept read-only.
	b := newBuildCaches(Options{Home: "/h", BuildCaches: []string{"/h/go/pkg/mod/", "/h/.gradle"}, CacheRoot: t.TempDir()})
	if !slices.Equal(b.tools, []cacheTool{cacheGoMod}) {
		t.Errorf("tools = %q, want go-mod alone", b.tools)
	}
	if !slices.Equal(b.user, []string{"/h/go/pkg/mod", "/h/.gradle"}) {
		t.Errorf("user caches = %q", b.user)
	}
	env := strings.Join(b.env("/s"), " ")
	if !strings.Contains(env, "GOPROXY=file:///h/go/pkg/mod/cache/download,https://proxy.golang.org,direct") || strings.Contains(env, "GOCACHE") {
		t.Errorf("env = %s", env)
	}
	none := newBuildCaches(Options{Home: "/h", BuildCaches: []string{}, CacheRoot: t.TempDir()})
	if d, err := none.standIn("/w"); err != nil || d != "" {
		t.Errorf("no caches, yet a stand-in %q (%v)", d, err)
	}
}

func TestBuildCaches_stand_ins_per_workspace_made_and_pruned(t *testing.T) {
	home := t.TempDir()
	cacheEnv(t, "")
	if err := os.MkdirAll(filepath.Join(home, ".cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cargo", "config.toml"), []byte("[net]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "root")
	b := newBuildCaches(Options{Home: home, CacheRoot: root})
	wsA, wsB := t.TempDir(), filepath.Join(t.TempDir(), "b")
	if err := os.Mkdir(wsB, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := b.standIn(wsA)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := b.standIn(wsB)
	if err != nil {
		t.Fatal(err)
	}
	if a == bb || !strings.HasPrefix(a, root+"/") || filepath.Base(a) != standInDir {
		t.Fatalf("stand-ins %q and %q", a, bb)
	}
	for _, tool := range []cacheTool{cacheGoBuild, cacheGoMod, cacheNPM, cachePip, cacheCargo} {
		if st, err := os.Stat(filepath.Join(a, string(tool))); err != nil || !st.IsDir() {
			t.Errorf("%s stand-in not made: %v", tool, err)
		}
	}
	if c, err := os.ReadFile(filepath.Join(a, "cargo", "config.toml")); err != nil || string(c) != "[net]\n" {
		t.Errorf("cargo's stand-in does not read the user's configuration: %q %v", c, err)
	}
	if again, _ := b.standIn(wsA); again != a {
		t.Errorf("the same workspace got another stand-in: %q, then %q", a, again)
	}
	// Removed behind the server's back, it is made again.
	if err := os.RemoveAll(filepath.Dir(a)); err != nil {
		t.Fatal(err)
	}
	if again, err := b.standIn(wsA); err != nil || again != a {
		t.Errorf("stand-in after removal: %q, %v", again, err)
	}
	if st, err := os.Stat(filepath.Join(a, "go-build")); err != nil || !st.IsDir() {
		t.Errorf("stand-in not made again: %v", err)
	}
	// The record of whose stand-in it is lies outside what a command
	// may write.
	if rec, err := os.ReadFile(filepath.Join(filepath.Dir(a), workspaceRecord)); err != nil || strings.TrimSpace(string(rec)) != wsA {
		t.Errorf("record = %q, %v", rec, err)
	}
	if err := os.Remove(wsB); err != nil {
		t.Fatal(err)
	}
	b.prune()
	if _, err := os.Stat(filepath.Dir(bb)); err == nil {
		t.Error("the stand-in of a workspace that is gone was kept")
	}
	if _, err := os.Stat(a); err != nil {
		t.Errorf("the stand-in of a workspace that exists was removed: %v", err)
	}
}

func TestWorkspaceKey(t *testing.T) {
	a, b := workspaceKey("/src/my proj"), workspaceKey("/other/my proj")
	if a == b || !strings.HasPrefix(a, "my_proj-") || len(a) != len("my_proj-")+16 {
		t.Errorf("keys %q and %q", a, b)
	}
	if k := workspaceKey("/"); strings.ContainsAny(k, "/") {
		t.Errorf("key of / = %q", k)
	}
}

// A command may write anything into its stand-in, even where a tool's
// directory was: a file, or a link out of the cache root. The next
// server (or one after a prune) makes the stand-in again instead of
// failing every command of the workspace with it.
func TestBuildCaches_stand_in_a_command_replaced_is_made_again(t *testing.T) {
	home := t.TempDir()
	cacheEnv(t, "")
	root := filepath.Join(t.TempDir(), "root")
	ws := t.TempDir()
	dir, err := newBuildCaches(Options{Home: home, CacheRoot: root}).standIn(ws)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for tool, plant := range map[cacheTool]func(string) error{
		cacheGoBuild: func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) },
		cacheGoMod:   func(p string) error { return os.Symlink(outside, p) },
		cacheNPM:     func(p string) error { return os.Symlink("../../..", p) },
	} {
		p := filepath.Join(dir, string(tool))
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := plant(p); err != nil {
			t.Fatal(err)
		}
	}
	again, err := newBuildCaches(Options{Home: home, CacheRoot: root}).standIn(ws)
	if err != nil || again != dir {
		t.Fatalf("stand-in after a command replaced its tools' directories: %q, %v", again, err)
	}
	for _, tool := range []cacheTool{cacheGoBuild, cacheGoMod, cacheNPM} {
		if st, err := os.Lstat(filepath.Join(dir, string(tool))); err != nil || !st.IsDir() {
			t.Errorf("%s stand-in not a directory again: %v", tool, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the server wrote outside the cache root: %v", entries)
	}
}

// What a command left in its stand-in is removed with it, never followed:
// links to a directory outside the cache root, to another workspace's
// stand-in and to a file of the user's leave all three as they were.
func TestBuildCaches_prune_follows_no_link_a_command_left(t *testing.T) {
	home := t.TempDir()
	cacheEnv(t, "")
	root := filepath.Join(t.TempDir(), "root")
	b := newBuildCaches(Options{Home: home, CacheRoot: root})
	gone, kept := filepath.Join(t.TempDir(), "gone"), t.TempDir()
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := b.standIn(gone)
	if err != nil {
		t.Fatal(err)
	}
	k, err := b.standIn(kept)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	userFile := filepath.Join(outside, "settings.json")
	for _, p := range []string{userFile, filepath.Join(k, "go-build", "entry")} {
		if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := filepath.Rel(filepath.Join(g, "npm"), k)
	if err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{
		filepath.Join(g, "go-build", "out"):  outside,
		filepath.Join(g, "npm", "other"):     rel,
		filepath.Join(g, "pip", "settings"):  userFile,
		filepath.Join(g, "go-mod", "nested"): filepath.Join(outside, "."),
	} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	b.prune()
	if _, err := os.Lstat(filepath.Dir(g)); err == nil {
		t.Error("the stand-in of a workspace that is gone was kept")
	}
	if c, err := os.ReadFile(userFile); err != nil || string(c) != "keep" {
		t.Errorf("a file a link pointed at: %q, %v", c, err)
	}
	if c, err := os.ReadFile(filepath.Join(k, "go-build", "entry")); err != nil || string(c) != "keep" {
		t.Errorf("another workspace's stand-in: %q, %v", c, err)
	}
}

package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// Build caches. The user's own build caches (Go's build and module
// caches, npm's, pip's, Cargo's registry) hold what the user's next
// unsandboxed build runs: a module's source, a crate's build.rs, a
// compiled package. A command never writes them: they are not writable
// roots (and, where a working directory holds them, the namespaces layer
// binds them read-only). Instead each workspace has stand-ins of its own,
// kept outside it (beneath [Options.CacheRoot]), and the tools' variables
// point a command's go, npm, pip and cargo there: GOCACHE, GOMODCACHE,
// npm_config_cache, PIP_CACHE_DIR, CARGO_HOME. A sandboxed command may
// fill and poison its workspace's stand-ins; only sandboxed commands of
// that workspace read them.
//
// Warm-up where the tool offers a safe one: Go's module cache is read
// through GOPROXY (file:// on the user's module cache's download
// directory, before the user's own proxies), so a module the user already
// has needs no network, and what it reads is checked against go.sum and
// the checksum database as any download is. Go's build cache is served
// by agent-mcp itself (GOCACHEPROG, launcher.GoCacheStage): from the
// stand-in, else read from the user's cache, every store into the
// stand-in, so a new workspace's first build reuses what the user's own
// builds compiled instead of compiling the standard library again (20 s
// on the 2-core VM). Cargo reads the user's configuration
// through a link in its stand-in; npm, pip and Cargo fetch what they lack
// through the egress proxy.
//
// The alternative measured beside this one, an overlay per cache (the
// user's cache beneath, the workspace's writes above), needs the
// namespaces layer (Landlock alone has no mounts), cannot share an upper
// directory between two commands running at once, and cost three times
// the per-command time in sandboxbench; the variables cost nothing
// measurable.

// cacheTool names one tool's stand-in, and so the variables that point
// the tool there (cacheEnv).
type cacheTool string

const (
	cacheGoBuild cacheTool = "go-build"
	cacheGoMod   cacheTool = "go-mod"
	cacheNPM     cacheTool = "npm"
	cachePip     cacheTool = "pip"
	cacheCargo   cacheTool = "cargo"
)

// knownCache is one of the user's caches a tool's variable can move.
type knownCache struct {
	tool cacheTool
	dir  string
}

// knownCaches are the user's build caches agent-mcp knows a variable for,
// where they are: $GOCACHE, $GOMODCACHE, $GOPATH (from the environment or
// go's own env file), $XDG_CACHE_HOME, $npm_config_cache,
// $PIP_CACHE_DIR and $CARGO_HOME are honoured.
func knownCaches(home string, goenv func(string) string) []knownCache {
	if home == "" {
		return nil
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(home, ".cache")
	}
	gocache := goenv("GOCACHE")
	if gocache == "" || gocache == "off" {
		gocache = filepath.Join(cache, "go-build")
	}
	modcache := goenv("GOMODCACHE")
	if modcache == "" {
		gopath := filepath.Join(home, "go")
		if g := goenv("GOPATH"); g != "" {
			gopath = filepath.SplitList(g)[0]
		}
		modcache = filepath.Join(gopath, "pkg", "mod")
	}
	npm := os.Getenv("npm_config_cache")
	if npm == "" {
		npm = filepath.Join(home, ".npm")
	}
	pip := os.Getenv("PIP_CACHE_DIR")
	if pip == "" {
		pip = filepath.Join(cache, "pip")
	}
	cargo := os.Getenv("CARGO_HOME")
	if cargo == "" {
		cargo = filepath.Join(home, ".cargo")
	}
	return []knownCache{
		{cacheGoBuild, filepath.Clean(gocache)}, {cacheGoMod, filepath.Clean(modcache)},
		{cacheNPM, filepath.Clean(npm)}, {cachePip, filepath.Clean(pip)},
		{cacheCargo, filepath.Join(cargo, "registry")}, {cacheCargo, filepath.Join(cargo, "git")},
	}
}

// goEnvReader reads go's variables as the go command does: the
// environment first, then go's env file ($GOENV, else
// os.UserConfigDir()/go/env, written by `go env -w`).
func goEnvReader() func(string) string {
	file := map[string]string{}
	path := os.Getenv("GOENV")
	if path == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			path = filepath.Join(dir, "go", "env")
		}
	}
	if f, err := os.Open(path); err == nil && path != "off" {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
			if !ok || strings.HasPrefix(k, "#") {
				continue
			}
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			file[k] = v
		}
		f.Close()
	}
	return func(key string) string {
		if v, ok := os.LookupEnv(key); ok {
			return v
		}
		return file[key]
	}
}

// buildCaches is what [New] works out once about the build caches.
type buildCaches struct {
	// user are the user's caches (Options.BuildCaches): never writable
	// by a command.
	user []string
	// tools are the stand-ins a command gets, for the user's caches
	// agent-mcp knows a variable for.
	tools []cacheTool
	// root holds one directory per workspace (Options.CacheRoot).
	root string
	// modcache is the user's Go module cache; goProxy and goFlags the
	// user's GOPROXY and GOFLAGS; cargoHome the user's CARGO_HOME.
	modcache, goProxy, goFlags, cargoHome string
	// gocache is the user's Go build cache, and cacheProg the command
	// that serves a command's go from the stand-in and, read-only, from
	// it (GOCACHEPROG, launcher.GoCacheStage); empty when the binary's
	// path cannot be written in GOCACHEPROG.
	gocache, cacheProg string

	mu sync.Mutex
	// made are the workspaces whose stand-ins exist: the directory a
	// command may write.
	made map[string]string
}

// BuildCaches are the user's build caches, which no command may write
// (caches.go); none for a nil Sandbox.
func (s *Sandbox) BuildCaches() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.caches.user)
}

// newBuildCaches matches the configured caches (nil: the known ones)
// against those agent-mcp knows a variable for.
func newBuildCaches(opts Options) *buildCaches {
	goenv := goEnvReader()
	known := knownCaches(opts.Home, goenv)
	b := &buildCaches{root: opts.CacheRoot, made: map[string]string{}}
	if opts.BuildCaches == nil {
		for _, k := range known {
			b.user = append(b.user, k.dir)
		}
	} else {
		for _, c := range opts.BuildCaches {
			b.user = append(b.user, filepath.Clean(c))
		}
	}
	for _, k := range known {
		if slices.Contains(b.user, k.dir) && !slices.Contains(b.tools, k.tool) {
			b.tools = append(b.tools, k.tool)
		}
		switch k.tool {
		case cacheGoBuild:
			b.gocache = k.dir
		case cacheGoMod:
			b.modcache = k.dir
		case cacheCargo:
			b.cargoHome = filepath.Dir(k.dir)
		}
	}
	b.goProxy = goenv("GOPROXY")
	if b.goProxy == "" {
		b.goProxy = "https://proxy.golang.org,direct"
	}
	b.goFlags = goenv("GOFLAGS")
	b.cacheProg = cacheProgCommand(opts.Launcher)
	if b.root == "" && opts.Home != "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			cache = filepath.Join(opts.Home, ".cache")
		}
		b.root = filepath.Join(cache, "agent-mcp", "build-caches")
	}
	return b
}

// standInDir is the directory beneath a workspace's entry in the cache
// root that a command may write; the entry itself holds the record of
// whose it is (workspaceRecord), which no command can change.
const (
	standInDir      = "c"
	workspaceRecord = "workspace"
)

// workspaceKey names a workspace's entry: its base name (for a person
// looking) and a hash of its path.
func workspaceKey(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(ws))
	if len(base) > 32 {
		base = base[:32]
	}
	return strings.TrimLeft(base, ".") + "-" + hex.EncodeToString(sum[:8])
}

// standIn returns the directory holding the workspace's stand-ins, made
// on first use (one directory per tool, and Cargo's link to the user's
// configuration), through an os.Root on the cache root so that nothing a
// command left there leads the server elsewhere.
func (b *buildCaches) standIn(ws string) (string, error) {
	if len(b.tools) == 0 || b.root == "" || ws == "" {
		return "", nil
	}
	ws = filepath.Clean(ws)
	b.mu.Lock()
	defer b.mu.Unlock()
	if dir, ok := b.made[ws]; ok {
		if _, err := os.Lstat(dir); err == nil {
			return dir, nil
		}
		// Removed since (by hand, or by another agent-mcp's prune):
		// made again.
	}
	if err := os.MkdirAll(b.root, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: build caches: %w", err)
	}
	root, err := os.OpenRoot(b.root)
	if err != nil {
		return "", fmt.Errorf("sandbox: build caches: %w", err)
	}
	defer root.Close()
	key := workspaceKey(ws)
	for _, t := range b.tools {
		// A command may have put a file or a link where a tool's
		// directory was: removed (never followed), so that the tool's
		// variable names a directory of the stand-in again.
		d := filepath.Join(key, standInDir, string(t))
		if st, err := root.Lstat(d); err == nil && !st.IsDir() {
			if err := root.RemoveAll(d); err != nil {
				return "", fmt.Errorf("sandbox: build caches: %w", err)
			}
		}
		if err := root.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("sandbox: build caches: %w", err)
		}
	}
	if err := root.WriteFile(filepath.Join(key, workspaceRecord), []byte(ws+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("sandbox: build caches: %w", err)
	}
	if slices.Contains(b.tools, cacheCargo) {
		// Cargo reads its configuration from CARGO_HOME: the stand-in's
		// points at the user's (read-only to the command).
		for _, name := range []string{"config.toml", "config"} {
			user := filepath.Join(b.cargoHome, name)
			if _, err := os.Stat(user); err != nil {
				continue
			}
			link := filepath.Join(key, standInDir, string(cacheCargo), name)
			if err := root.Symlink(user, link); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("sandbox: build caches: %w", err)
			}
		}
	}
	dir := filepath.Join(b.root, key, standInDir)
	b.made[ws] = dir
	return dir, nil
}

// env points a command's tools at the stand-ins in dir.
func (b *buildCaches) env(dir string) []string {
	if dir == "" {
		return nil
	}
	var env []string
	for _, t := range b.tools {
		d := filepath.Join(dir, string(t))
		switch t {
		case cacheGoBuild:
			// GOCACHEPROG is always set: a program of the user's own
			// would store into the user's cache.
			prog := ""
			if u, o := quoteGoArg(b.gocache), quoteGoArg(d); b.cacheProg != "" && u != "" && o != "" {
				prog = b.cacheProg + " " + u + " " + o
			}
			env = append(env, "GOCACHE="+d, "GOCACHEPROG="+prog)
		case cacheGoMod:
			// Modules the user has are read from the user's cache as
			// from a proxy (and checked as a download is); the rest come
			// from the user's proxies. -modcacherw keeps the stand-in
			// removable.
			download := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(b.modcache, "cache", "download"))}).String()
			env = append(env, "GOMODCACHE="+d, "GOPROXY="+download+","+b.goProxy,
				"GOFLAGS="+strings.TrimSpace(b.goFlags+" -modcacherw"))
		case cacheNPM:
			env = append(env, "npm_config_cache="+d)
		case cachePip:
			env = append(env, "PIP_CACHE_DIR="+d)
		case cacheCargo:
			env = append(env, "CARGO_HOME="+d)
		}
	}
	return env
}

// cacheProgCommand is GOCACHEPROG's program and stage: the agent-mcp
// binary (launcher, else the running one; /proc/self/exe would name the go
// command there) run as launcher.GoCacheStage. Empty when the path cannot
// be quoted for GOCACHEPROG.
func cacheProgCommand(launcherPath string) string {
	exe := launcherPath
	if exe == "" || exe == "/proc/self/exe" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return ""
		}
	}
	if !filepath.IsAbs(exe) || strings.HasSuffix(exe, " (deleted)") {
		return ""
	}
	q := quoteGoArg(exe)
	if q == "" {
		return ""
	}
	return q + " " + launcher.HiddenCommand + " " + launcher.GoCacheStage
}

// quoteGoArg quotes s for the go command's argument lists (GOCACHEPROG
// is split as GOFLAGS-like quoted words): as it is without a space or
// quote, else in the quote it does not hold; "" where it holds both.
func quoteGoArg(s string) string {
	switch {
	case !strings.ContainsAny(s, " \t\n'\""):
		return s
	case !strings.Contains(s, "'"):
		return "'" + s + "'"
	case !strings.Contains(s, `"`):
		return `"` + s + `"`
	}
	return ""
}

// prune removes the stand-ins of workspaces that no longer exist (a
// temporary directory a test or `sandbox check` worked in). A nil b (New
// probing before it made b, to say why it fails) has none.
func (b *buildCaches) prune() {
	if b == nil || b.root == "" {
		return
	}
	root, err := os.OpenRoot(b.root)
	if err != nil {
		return
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return
	}
	for _, e := range entries {
		rec, err := root.ReadFile(filepath.Join(e.Name(), workspaceRecord))
		if err != nil {
			continue
		}
		ws := strings.TrimSpace(string(rec))
		if _, err := os.Stat(ws); errors.Is(err, fs.ErrNotExist) && workspaceKey(ws) == e.Name() {
			_ = root.RemoveAll(e.Name())
		}
	}
}

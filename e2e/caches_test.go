package e2e

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// treeListing lists every path beneath dir with its size, sorted: what an
// unsandboxed reader sees there.
func treeListing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	if _, err := os.Lstat(dir); err != nil {
		return "absent"
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %d", strings.TrimPrefix(p, dir), info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// goModuleProxy writes a module proxy directory (GOPROXY=file://) serving
// example.com/dep v1.0.0, whose package has one function.
func goModuleProxy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	v := filepath.Join(dir, "example.com", "dep", "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/dep\n\ngo 1.21\n"
	files := map[string]string{
		"list":        "v1.0.0\n",
		"v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"v1.0.0.mod":  mod,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(v, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(v, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{
		"example.com/dep@v1.0.0/go.mod": mod,
		"example.com/dep@v1.0.0/dep.go": "package dep\n\n// Answer is what the build needs from the module.\nfunc Answer() int { return 42 }\n",
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// chownTree gives dir and everything beneath it to the environment's user.
func chownTree(t *testing.T, e *sandboxenv.Env, dir string) {
	t.Helper()
	if e.User.UID == os.Getuid() {
		return
	}
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, e.User.UID, e.User.GID)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSandbox_builds_fill_per_workspace_caches: go build with a module
// the user's module cache holds works inside the sandbox with no network
// at all (GOPROXY=off beyond the user's cache), npm install of a local
// file: dependency works, and cargo build where cargo is installed; the
// user's caches stay exactly as they were, and the tools' variables point
// at the workspace's stand-ins.
func TestSandbox_builds_fill_per_workspace_caches(t *testing.T) {
	t.Parallel()
	gobin, err := sandboxenv.GoBinary()
	if err != nil {
		t.Skip(err)
	}
	proxy := goModuleProxy(t)
	npm, npmErr := exec.LookPath("npm")
	cargo, cargoErr := exec.LookPath("cargo")
	sandboxenv.ForEach(t, binary, func(t *testing.T, e *sandboxenv.Env, layers string) {
		// The user's module cache gets the module as the user's own
		// `go mod download` puts it there.
		modcache := filepath.Join(e.Home, "go", "pkg", "mod")
		dl := exec.Command(gobin, "mod", "download", "-json", "example.com/dep@v1.0.0")
		dl.Dir = e.Root
		dl.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOPROXY=file://"+proxy, "GOSUMDB=off",
			"GOFLAGS=-modcacherw", "GOENV=off", "GOTOOLCHAIN=local")
		out, err := dl.Output()
		if err != nil {
			t.Fatalf("go mod download: %v", err)
		}
		var info struct{ Sum, GoModSum string }
		if err := json.Unmarshal(out, &info); err != nil {
			t.Fatalf("go mod download -json: %v: %s", err, out)
		}
		mod := filepath.Join(e.Work, "mod")
		files := map[string]string{
			"go.mod":       "module m\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n",
			"go.sum":       fmt.Sprintf("example.com/dep v1.0.0 %s\nexample.com/dep v1.0.0/go.mod %s\n", info.Sum, info.GoModSum),
			"m.go":         "package m\n\nimport \"example.com/dep\"\n\n// Twice doubles the module's answer.\nfunc Twice() int { return 2 * dep.Answer() }\n",
			"warm/warm.go": "// Package warm is compiled by the user before the sandbox starts.\npackage warm\n\n// One is one.\nfunc One() int { return 1 }\n",
		}
		for name, body := range map[string]string{
			"package.json":     `{"name":"proj","version":"1.0.0","dependencies":{"dep":"file:./dep"}}`,
			"dep/package.json": `{"name":"dep","version":"1.0.0","main":"index.js"}`,
			"dep/index.js":     "exports.answer = 42;\n",
		} {
			files[filepath.Join("..", "npmproj", name)] = body
		}
		for name, body := range files {
			p := filepath.Join(mod, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(e.Home, ".npm"), 0o755); err != nil {
			t.Fatal(err)
		}
		// The user's own build of package warm fills the user's build
		// cache.
		gocache := filepath.Join(e.Home, ".cache", "go-build")
		build := exec.Command(gobin, "build", "./warm")
		build.Dir = mod
		build.Env = append(os.Environ(), "GOCACHE="+gocache, "GOMODCACHE="+modcache, "GOPROXY=off",
			"GOFLAGS=-modcacherw", "GOENV=off", "GOTOOLCHAIN=local")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("the user's go build: %v\n%s", err, out)
		}
		chownTree(t, e, e.Home)
		chownTree(t, e, e.Work)

		path := filepath.Dir(gobin) + ":" + os.Getenv("PATH")
		// The user's Go caches are named as a user with GOCACHE and
		// GOMODCACHE set names them: the test process's own variables
		// (a CI's GOCACHE) are not the user's here.
		env := []string{"PATH=" + path, "GOPROXY=off", "GOTOOLCHAIN=local", "GOCACHE=" + gocache, "GOMODCACHE=" + modcache}
		if rh := os.Getenv("RUSTUP_HOME"); rh != "" {
			env = append(env, "RUSTUP_HOME="+rh)
		} else if h, err := os.UserHomeDir(); err == nil {
			env = append(env, "RUSTUP_HOME="+filepath.Join(h, ".rustup"))
		}
		cs, _ := e.Serve(t, layers, env)
		// After the server's start, which makes the caches it does not
		// find.
		userCaches := func() string {
			var all []string
			for _, c := range []string{filepath.Join("go", "pkg", "mod"), ".npm", filepath.Join(".cache", "go-build"), filepath.Join(".cache", "pip"), ".cargo"} {
				all = append(all, c+":\n"+treeListing(t, filepath.Join(e.Home, c)))
			}
			return strings.Join(all, "\n")
		}
		before := userCaches()

		res, failed := testbin.Bash(t, cs, `cd mod && go build ./... && echo BUILT && go list -m -f '{{.Dir}}' example.com/dep && go env GOCACHE`, false)
		if failed || !strings.Contains(res, "BUILT") {
			t.Errorf("go build with a module from the user's cache, no network: %s", res)
		}
		if strings.Contains(res, modcache) || strings.Contains(res, gocache) {
			t.Errorf("go used the user's caches, not the workspace's stand-ins: %s", res)
		}
		// What the user compiled is read from the user's cache, not
		// compiled again (GOCACHEPROG).
		res, failed = testbin.Bash(t, cs, `go list -export -f '{{.Export}}' ./warm`, false)
		if failed || !strings.HasPrefix(strings.TrimSpace(res), gocache+"/") {
			t.Errorf("package warm's export data, want it from the user's build cache %s: %s", gocache, res)
		}
		if npmErr != nil {
			t.Logf("npm install not tried: %v", npmErr)
		} else {
			out, failed := testbin.Bash(t, cs, "cd "+filepath.Join(e.Work, "npmproj")+` && `+npm+` install --no-audit --no-fund --offline 2>&1 && node -e 'console.log("answer", require("dep").answer)' && echo "cache=$npm_config_cache"`, false)
			if failed || !strings.Contains(out, "answer 42") || strings.Contains(out, "cache="+filepath.Join(e.Home, ".npm")) {
				t.Errorf("npm install of a file: dependency: %s", out)
			}
		}
		if cargoErr != nil {
			t.Logf("cargo build not tried: %v", cargoErr)
		} else if out, failed := testbin.Bash(t, cs, cargo+" --version", false); failed {
			t.Logf("cargo build not tried: cargo does not run as this user here: %s", out)
		} else {
			out, failed := testbin.Bash(t, cs, "cd "+e.Work+" && "+cargo+` new --vcs none --name hello hello 2>&1 && cd hello && `+cargo+` build --offline 2>&1 && ./target/debug/hello && echo "home=$CARGO_HOME"`, false)
			if failed || !strings.Contains(out, "Hello, world!") || strings.Contains(out, "home="+filepath.Join(e.Home, ".cargo")+"\n") {
				t.Errorf("cargo build: %s", out)
			}
		}
		if after := userCaches(); after != before {
			t.Errorf("the user's caches changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

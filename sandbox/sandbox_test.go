package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// The kernel side (namespaces, Landlock, killing what a command left) is
// tested through the real binary in e2e/sandbox_test.go; these are the
// pure parts.

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": ModeAuto, "auto": ModeAuto, "Required": ModeRequired, " off ": ModeOff} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("strict"); err == nil {
		t.Error(`ParseMode("strict") accepted`)
	}
}

func TestConfines(t *testing.T) {
	t.Parallel()
	s := &Sandbox{layers: Layers{Landlock: 7}}
	if !s.Confines() {
		t.Error("a Sandbox with Landlock does not confine")
	}
	var none *Sandbox
	if none.Confines() || none.Layers().Any() || none.HoldsPaths() {
		t.Error("a nil Sandbox confines")
	}
	l, err := none.Command(Spec{Shell: "/bin/sh", Script: "true"}, time.Second)
	if err != nil || l.Cmd.Path != "/bin/sh" || len(l.Env) != 0 {
		t.Errorf("a nil Sandbox's command: %+v, %v", l, err)
	}
	// An excluded command is the plain shell, with the guard of
	// protected names told (it sweeps first while a command runs).
	l, err = s.Command(Spec{Shell: "/bin/sh", Script: "true", Excluded: true}, time.Second)
	if err != nil || l.Cmd.Path != "/bin/sh" || l.Confined() || len(l.Env) != 0 || l.guard != &s.guard {
		t.Errorf("an excluded command: %+v, %v", l, err)
	}
}

func TestLayersString(t *testing.T) {
	t.Parallel()
	for l, want := range map[Layers]string{{}: "none", {Namespaces: true}: "namespaces",
		{Landlock: 4}: "landlock(ABI 4)", {Namespaces: true, Landlock: 7}: "namespaces+landlock(ABI 7)"} {
		if got := l.String(); got != want {
			t.Errorf("%+v: %q, want %q", l, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"secret/a.txt", "sub/.env", "sub/deep/.env", "keep.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := existing(expand([]Pattern{{dir, "secret/**"}, {dir, "**/.env"}, {dir, "missing/**"}}))
	want := []string{filepath.Join(dir, "secret"), filepath.Join(dir, "sub/.env"), filepath.Join(dir, "sub/deep/.env")}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("expand = %q, want %q", got, want)
	}
	if !within(filepath.Join(dir, "a"), []string{dir}) || within(dir+"x", []string{dir}) {
		t.Error("within compares by prefix, not by component")
	}
}

func TestDefaultBuildCaches(t *testing.T) {
	cacheEnv(t, "")
	t.Setenv("GOCACHE", "/c/go")
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", "/gp")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("npm_config_cache", "")
	t.Setenv("CARGO_HOME", "")
	got := DefaultBuildCaches("/h")
	want := []string{"/c/go", "/gp/pkg/mod", "/h/.npm", "/h/.cache/pip", "/h/.cargo/registry", "/h/.cargo/git"}
	if !slices.Equal(got, want) {
		t.Errorf("DefaultBuildCaches = %q, want %q", got, want)
	}
	if DefaultBuildCaches("") != nil {
		t.Error("no home, yet caches")
	}
}

// TestNew_probes_namespaces_in_the_background: New starts no process (an
// MCP server answers initialize first, then calls StartProbe); StartProbe
// returns while the probe runs, and what needs the layers starts the probe
// if need be and waits for its answer.
func TestNew_probes_namespaces_in_the_background(t *testing.T) {
	if os.Getenv(LayersEnv) != "" {
		t.Skipf("%s is set", LayersEnv)
	}
	if err := launcher.ProbeNamespaces("/bin/true"); err != nil {
		t.Skipf("no user namespaces here, so no probe to wait for: %v", err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	// The launcher the probe runs: held until it reads a line the test
	// writes into the fifo.
	script := filepath.Join(dir, "launcher")
	body := "#!/bin/sh\nread x < " + fifo + "\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{Mode: ModeAuto, Launcher: script, BuildCaches: []string{}}
	idle, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	unstarted := false
	idle.probeStart.Do(func() { unstarted = true })
	if !unstarted {
		t.Fatal("New started the probe: its child processes would run beside a server's first answer")
	}
	started, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	started.StartProbe()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, sb := range []*Sandbox{started, s} {
		select {
		case <-sb.probed:
			t.Fatal("the probe finished while its launcher was held: something waited for it, or it did not run")
		default:
		}
	}
	got := make(chan Layers, 1)
	go func() { got <- s.Layers() }()
	// Opened for reading and writing, a fifo does not wait for a reader;
	// a line for each launcher the probes run (namespaces, cgroup).
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("go\ngo\ngo\ngo\n"); err != nil {
		t.Fatal(err)
	}
	if l := <-got; !l.Namespaces {
		t.Errorf("Layers() = %+v before the probe's answer, want the namespaces the probe found", l)
	}
	if d := s.Describe(); !strings.Contains(d, "namespaces") {
		t.Errorf("Describe() = %q, want it to name the namespaces", d)
	}
	<-started.probed
	if l := started.Layers(); !l.Namespaces {
		t.Errorf("after StartProbe, Layers() = %+v, want the namespaces the probe found", l)
	}
}

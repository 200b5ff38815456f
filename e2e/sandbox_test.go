package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/sandbox"
)

func TestSandbox_interpreters_cannot_write_outside_or_change_protected_paths(t *testing.T) {
	t.Parallel()
	helper, err := sandboxenv.HelperBinary()
	if err != nil {
		t.Fatal(err)
	}
	sandboxenv.ForEach(t, binary, func(t *testing.T, e *sandboxenv.Env, layers string) {
		settings := `{"permissions":{"deny":["Read(./secret/**)"]}}`
		cs, _ := e.Serve(t, layers, nil, "--settings", settings)
		o := e.Outside
		attempts := map[string]string{
			"python3": fmt.Sprintf(`python3 -c "open('%s/py.txt','w').write('x')"`, o),
			"perl":    fmt.Sprintf(`perl -e 'open(F, ">", "%s/pl.txt") or die; print F "x"; unlink "%s/keep.txt"'`, o, o),
			"awk":     fmt.Sprintf(`awk 'BEGIN{print "x" > "%s/awk.txt"; system("rm -f %s/keep.txt")}'`, o, o),
			"helper":  fmt.Sprintf(`%s write %s/bin.txt; %s remove %s/keep.txt`, helper, o, helper, o),
			"script":  fmt.Sprintf(`printf '#!/bin/sh\necho x > %s/sh.txt\n' > w.sh && chmod +x w.sh && ./w.sh`, o),
		}
		for name, cmd := range attempts {
			if name != "helper" && name != "script" {
				if _, err := exec.LookPath(name); err != nil {
					t.Logf("%s not installed: skipped", name)
					continue
				}
			}
			// The command must have run: the kernel, not a rule, stops it.
			out, _ := testbin.Bash(t, cs, cmd+"; echo RAN", false)
			if !strings.Contains(out, "RAN") {
				t.Errorf("%s did not run: %s", name, out)
			}
		}
		entries, _ := os.ReadDir(o)
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		if strings.Join(names, ",") != "keep.txt" {
			t.Errorf("outside the writable roots now holds %v, want only keep.txt", names)
		}
		// Writing inside the working directory and the private TMPDIR works.
		if out, failed := testbin.Bash(t, cs, `python3 -c "open('in.txt','w').write('x')" && `+helper+` write in2.txt && t=$(mktemp) && echo ok > "$t" && cat "$t"`, false); failed || !strings.Contains(out, "ok") {
			t.Errorf("writing inside: %v %s", failed, out)
		}
		for _, f := range []string{"in.txt", "in2.txt"} {
			if _, err := os.Stat(filepath.Join(e.Work, f)); err != nil {
				t.Errorf("%s was not written inside the working directory: %v", f, err)
			}
		}

		if !strings.Contains(layers, "namespaces") {
			return // protected and Read-denied paths are held by the mount layer
		}
		for _, c := range []string{
			`python3 -c "open('.git/config','a').write('[alias]\n x = !sh')"`,
			helper + ` append .mcp.json`,
			`perl -e 'unlink ".mcp.json"; mkdir ".git/hooks"'`,
			`awk 'BEGIN{print "x" > ".git/config"}'`,
		} {
			if out, _ := testbin.Bash(t, cs, c+"; echo RAN", false); !strings.Contains(out, "RAN") {
				t.Errorf("%s did not run: %s", c, out)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(e.Work, ".git", "config")); string(b) != "[core]\n" {
			t.Errorf(".git/config changed: %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(e.Work, ".mcp.json")); string(b) != "{}\n" {
			t.Errorf(".mcp.json changed: %q", b)
		}
		for _, c := range []string{
			`python3 -c "print(open('secret/s.txt').read())"`,
			// Paths the command analysis cannot see (a deny rule would
			// refuse a visible one before it runs).
			helper + ` read "$(printf secret)/s.txt"`,
			`perl -e 'open(F, "<", "secret/s.txt"); print <F>'`,
		} {
			if out, _ := testbin.Bash(t, cs, c+"; echo RAN", false); strings.Contains(out, "TOPSECRET") || !strings.Contains(out, "RAN") {
				t.Errorf("%s read a Read-denied file, or did not run: %s", c, out)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(e.Work, "secret", "s.txt")); string(b) != "TOPSECRET\n" {
			t.Errorf("the masked file changed on disk: %q", b)
		}
	})
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted here, or "".
func cgroup2Mount() string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 9 && slices.Contains(f, "cgroup2") && f[len(f)-3] == "cgroup2" {
			return f[4]
		}
	}
	return ""
}

// Without a PID namespace ("landlock" alone) a command's processes are held
// by a cgroup of their own where one can be made ("landlock,cgroup": as
// root; an unprivileged user needs a delegated cgroup) and by the
// launcher as a child subreaper otherwise ("landlock").
func TestSandbox_escaped_processes_end_with_TaskStop_and_the_session(t *testing.T) {
	t.Parallel()
	sandboxenv.ForEachLayers(t, binary, append(slices.Clone(sandboxenv.LayerSets), "landlock,cgroup"), func(t *testing.T, e *sandboxenv.Env, layers string) {
		cs, srv := e.Serve(t, layers, nil)
		if strings.Contains(layers, "cgroup") {
			out, _ := testbin.Bash(t, cs, "grep '^0::' /proc/self/cgroup", false)
			path := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "0::"))
			if !strings.Contains(path, "/agent-mcp-") {
				if sup := sandboxenv.Support(binary); e.User.UID == os.Getuid() && sup.Cgroup != "" {
					t.Fatalf("sandbox check says cgroups can be made, but the command is in no cgroup of its own: %s", out)
				}
				t.Skipf("no cgroup can be made for uid %d here: %s", e.User.UID, out)
			}
			// The cgroup goes once the command's processes have.
			dir := filepath.Join(cgroup2Mount(), path)
			gone := func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) }
			if err := testbin.Poll(t, gone); err != nil {
				t.Errorf("the command's cgroup %s is still there (%v)", dir, err)
			}
		}
		escapes := func(tag string) (string, []string) {
			var args []string
			for i := 0; i < 4; i++ {
				args = append(args, fmt.Sprintf("300.%s%d%d", tag, i, time.Now().UnixNano()%1_000_000_000))
			}
			cmd := fmt.Sprintf(`setsid sleep %s & setsid -f sleep %s; ( ( sleep %s & ) & ); set -m; sleep %s & echo started`,
				args[0], args[1], args[2], args[3])
			return cmd, args
		}
		// TaskStop ends a background task's escaped processes.
		cmd, args := escapes("1")
		out, _ := testbin.Bash(t, cs, cmd+"; sleep 300", true)
		id := strings.TrimSuffix(strings.Fields(strings.TrimPrefix(out, "Command running in the background as task "))[0], ".")
		for _, a := range args {
			testbin.WaitProcs(t, a, 1, 20*time.Second)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "TaskStop", Arguments: map[string]any{"task_id": id}})
		if err != nil || res.IsError {
			t.Fatalf("TaskStop %s: %v %s", id, err, testbin.Text(t, res))
		}
		for _, a := range args {
			testbin.WaitProcs(t, a, 0, 20*time.Second)
		}
		// The session's end ends what a foreground command left running.
		cmd, args = escapes("2")
		if out, failed := testbin.Bash(t, cs, cmd, false); failed || !strings.Contains(out, "started") {
			t.Fatalf("foreground: %v %s", failed, out)
		}
		for _, a := range args {
			testbin.WaitProcs(t, a, 1, 20*time.Second)
		}
		_ = cs.Close()
		_ = srv.Wait()
		for _, a := range args {
			testbin.WaitProcs(t, a, 0, 20*time.Second)
		}
	})
}

// TestSandbox_processes_die_with_a_killed_server: when the server itself is
// SIGKILLed (or crashes), nothing of a command outlives it: a background
// task, what it left behind with setsid and a double fork, and what a
// finished foreground command left running, with a PID namespace, with a
// cgroup ("landlock,cgroup": as root) and with the launcher as a subreaper
// alone ("landlock").
func TestSandbox_processes_die_with_a_killed_server(t *testing.T) {
	t.Parallel()
	sandboxenv.ForEachLayers(t, binary, []string{"namespaces,landlock", "landlock,cgroup", "landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		cs, srv := e.Serve(t, layers, nil)
		stale := "" // the glob of the commands' cgroups of the server killed
		if strings.Contains(layers, "cgroup") {
			out, _ := testbin.Bash(t, cs, "grep '^0::' /proc/self/cgroup", false)
			if !strings.Contains(out, "/agent-mcp-") {
				if sup := sandboxenv.Support(binary); e.User.UID == os.Getuid() && sup.Cgroup != "" {
					t.Fatalf("sandbox check says cgroups can be made, but the command is in no cgroup of its own: %s", out)
				}
				t.Skipf("no cgroup can be made for uid %d here: %s", e.User.UID, out)
			}
			path := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "0::"))
			stale = filepath.Join(cgroup2Mount(), filepath.Dir(path), fmt.Sprintf("agent-mcp-%d-*", srv.Process.Pid))
		}
		var marks []string
		mark := func() string {
			m := fmt.Sprintf("300.%d%d", len(marks), time.Now().UnixNano()%1_000_000_000)
			marks = append(marks, m)
			return m
		}
		leave := func() string {
			return fmt.Sprintf(`setsid sleep %s & setsid -f sleep %s; ( ( sleep %s & ) & ); echo started`, mark(), mark(), mark())
		}
		// A command that opens init's end of the server's socket (or, were
		// it a pipe, a write end of it) through /proc does not keep init
		// from seeing the server die.
		m := mark()
		hold := fmt.Sprintf(`{ setsid -f sleep %s 7>/proc/$PPID/fd/4 || setsid -f sleep %s; } 2>/dev/null; `, m, m)
		if out, failed := testbin.Bash(t, cs, hold+leave()+"; sleep "+mark(), true); failed {
			t.Fatalf("background command: %s", out)
		}
		if out, failed := testbin.Bash(t, cs, leave(), false); failed || !strings.Contains(out, "started") {
			t.Fatalf("foreground command: %v %s", failed, out)
		}
		for _, m := range marks {
			testbin.WaitProcs(t, m, 1, 20*time.Second)
		}
		if err := srv.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for _, m := range marks {
			testbin.WaitProcs(t, m, 0, 20*time.Second)
		}
		// The launchers end too, once what they held is gone.
		if err := testbin.Poll(t, func() bool { return launchersOf(marks) == 0 }); err != nil {
			t.Fatalf("%d launchers of the killed server's commands are still running (%v)", launchersOf(marks), err)
		}
		if stale == "" {
			return
		}
		// Only a server removes a cgroup: the next one to start removes
		// those the killed one left (another test's server starting
		// meanwhile may have done so already).
		if left, _ := filepath.Glob(stale); len(left) == 0 {
			t.Logf("no cgroup of the killed server's commands is left (%s)", stale)
		}
		cs2, _ := e.Serve(t, layers, nil)
		if out, failed := testbin.Bash(t, cs2, "true", false); failed {
			t.Fatalf("a command of the next server: %s", out)
		}
		if left, _ := filepath.Glob(stale); len(left) > 0 {
			t.Errorf("the next server left the killed one's cgroups: %v", left)
		}
	})
}

// launchersOf counts the sandbox launchers whose plan names one of marks.
func launchersOf(marks []string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		args := strings.Split(string(b), "\x00")
		if err != nil || len(args) < 4 || args[1] != sandbox.HiddenCommand || args[2] != "init" {
			continue
		}
		for _, m := range marks {
			if strings.Contains(args[3], m) {
				n++
				break
			}
		}
	}
	return n
}

// TestSandbox_launcher_skips_the_application_init: each sandboxed command
// starts agent-mcp again as its launcher, which runs from package
// launcher's initialisation, before the packages it does not need (the
// chat UI's syntax highlighting once took ~10 ms of every command's
// start). GODEBUG=inittrace=1 lists the packages a run initialises.
func TestSandbox_launcher_skips_the_application_init(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the launcher runs on Linux only")
	}
	trace := func(args ...string) string {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(testbin.HermeticEnv(t), "GODEBUG=inittrace=1")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	const heavy = "init github.com/modelcontextprotocol/go-sdk/mcp "
	if app := trace("version"); !strings.Contains(app, heavy) {
		t.Fatalf("agent-mcp version no longer initialises %q: choose another heavy package for this test\n%s", heavy, app)
	}
	l := trace(sandbox.HiddenCommand)
	if !strings.Contains(l, "agent-mcp sandbox launcher: missing stage") {
		t.Fatalf("the launcher did not run:\n%s", l)
	}
	if strings.Contains(l, heavy) {
		t.Errorf("the launcher initialised the application's packages (package launcher must import only the standard library, x/sys and go-landlock):\n%s", l)
	}
}

// TestSandbox_cgroup_ends_what_a_killed_launcher_left: without a PID
// namespace, a command's processes die with its cgroup even when its
// launcher is killed outright (a subreaper's orphans would go to the
// host's init): the server kills what the cgroup holds once it has reaped
// the launcher.
func TestSandbox_cgroup_ends_what_a_killed_launcher_left(t *testing.T) {
	t.Parallel()
	sandboxenv.RequireLayers(t, binary, "landlock")
	if sandboxenv.Support(binary).Cgroup == "" {
		t.Skip("no cgroup can be made here")
	}
	e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
	cs, _ := e.Serve(t, "landlock,cgroup", nil)
	m := fmt.Sprintf("300.%d", time.Now().UnixNano()%1_000_000_000)
	if out, failed := testbin.Bash(t, cs, "setsid sleep "+m+" & sleep 300", true); failed {
		t.Fatalf("background command: %s", out)
	}
	testbin.WaitProcs(t, m, 1, 20*time.Second)
	// The launcher is the process whose plan holds the command.
	launcher := 0
	entries, _ := os.ReadDir("/proc")
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		args := strings.Split(string(b), "\x00")
		if err == nil && len(args) > 3 && args[1] == sandbox.HiddenCommand && args[2] == "init" && strings.Contains(args[3], m) {
			launcher, _ = strconv.Atoi(en.Name())
		}
	}
	if launcher == 0 {
		t.Fatal("the command's launcher was not found")
	}
	if err := killProcess(launcher); err != nil {
		t.Fatal(err)
	}
	testbin.WaitProcs(t, m, 0, 20*time.Second)
}

// listener counts the connections accepted on a host loopback port.
func listener(t *testing.T) (port int, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted = &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, accepted
}

// udpListener counts the datagrams received on a host loopback port.
func udpListener(t *testing.T) (port int, received *atomic.Int64) {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	received = &atomic.Int64{}
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			received.Add(1)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).Port, received
}

// waitCount waits until n reaches want (testbin.Poll), and returns n.
func waitCount(t *testing.T, n *atomic.Int64, want int64) int64 {
	_ = testbin.Poll(t, func() bool { return n.Load() == want })
	return n.Load()
}

func TestSandbox_network_off_refuses_the_host_loopback(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	sandboxenv.ForEach(t, binary, func(t *testing.T, e *sandboxenv.Env, layers string) {
		connect := `python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', %d), timeout=5); print('connected')"`
		// UDP is not TCP: Landlock alone does not hold it (a seccomp
		// filter does), a network namespace does.
		send := `python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', %d)); print('sent')"`
		port, accepted := listener(t)
		udpPort, received := udpListener(t)
		on, _ := e.Serve(t, layers, nil, "--settings", `{"sandbox":{"network":true}}`)
		if out, failed := testbin.Bash(t, on, fmt.Sprintf(connect, port), false); failed || !strings.Contains(out, "connected") {
			t.Fatalf("network on: %v %s", failed, out)
		}
		// The accept may land just after the client returns.
		if n := waitCount(t, accepted, 1); n != 1 {
			t.Fatalf("network on: the listener accepted %d connections, want 1", n)
		}
		if out, failed := testbin.Bash(t, on, fmt.Sprintf(send, udpPort), false); failed || !strings.Contains(out, "sent") {
			t.Fatalf("network on: UDP: %v %s", failed, out)
		}
		if n := waitCount(t, received, 1); n != 1 {
			t.Fatalf("network on: the UDP listener received %d datagrams, want 1", n)
		}
		off, _ := e.Serve(t, layers, nil, "--settings", `{"sandbox":{"network":false}}`)
		out, failed := testbin.Bash(t, off, fmt.Sprintf(connect, port), false)
		if !failed || strings.Contains(out, "connected") {
			t.Errorf("network off: the connection was made: %s", out)
		}
		// TCP Fast Open connects from sendto, without connect(2): the
		// seccomp filter refuses it where Landlock alone holds TCP.
		fastOpen := `python3 -c "import socket; s = socket.socket(); s.sendto(b'x', socket.MSG_FASTOPEN, ('127.0.0.1', %d)); print('sent')"`
		if out, _ := testbin.Bash(t, off, fmt.Sprintf(fastOpen, port), false); strings.Contains(out, "sent") {
			t.Errorf("network off: a TCP Fast Open send was made: %s", out)
		}
		out, _ = testbin.Bash(t, off, fmt.Sprintf(send, udpPort)+"; echo RAN", false)
		if !strings.Contains(out, "RAN") {
			t.Errorf("network off: the UDP sender did not run: %s", out)
		}
		if filtered := runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"; filtered && !strings.Contains(layers, "namespaces") && !strings.Contains(out, "Permission denied") {
			t.Errorf("network off, Landlock alone: making the UDP socket was not refused: %s", out)
		}
		// listen on an unbound TCP socket binds it to a port of every
		// address, which Landlock does not see: with Landlock alone the
		// filter refuses the socket itself.
		listen := `python3 -c "import socket; s = socket.socket(); s.listen(); print('listening on', s.getsockname())"`
		if out, _ := testbin.Bash(t, off, listen, false); (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") && !strings.Contains(layers, "namespaces") && strings.Contains(out, "listening") {
			t.Errorf("network off, Landlock alone: a TCP socket listened: %s", out)
		}
		time.Sleep(100 * time.Millisecond) // let a stray accept or datagram land
		if n := accepted.Load(); n != 1 {
			t.Errorf("network off: the host listener accepted %d connections, want 1 (the network-on one)", n)
		}
		if n := received.Load(); n != 1 {
			t.Errorf("network off: the host UDP listener received %d datagrams, want 1 (the network-on one)", n)
		}
	})
}

func TestSandbox_defaults_let_builds_git_and_local_servers_work(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"git", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	sandboxenv.RequireLayers(t, binary, "namespaces,landlock")
	u := sandboxenv.Users(t)[0]
	e := sandboxenv.New(t, binary, u)
	// GOCACHE names the user's build cache, which commands do not
	// write: their go uses the workspace's stand-in (a first go test
	// compiles the standard library's packages it needs).
	gobin, err := sandboxenv.GoBinary()
	if err != nil {
		t.Skip(err)
	}
	gocache, err := exec.Command(gobin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// A token in the server's environment stays out (the environment is
	// an allow-list) and the builds do not miss it.
	cs, _ := e.Serve(t, "namespaces,landlock", []string{"GOCACHE=" + strings.TrimSpace(string(gocache)),
		"PATH=" + filepath.Dir(gobin) + ":" + os.Getenv("PATH"), "GITHUB_TOKEN=build-env-token-0381"})
	type step struct{ name, cmd, want string }
	steps := []step{
		{"go build and go test", `mkdir -p mod && cd mod && printf 'module m\n\ngo 1.21\n' > go.mod && ` +
			`printf 'package m\n\nfunc Add(a, b int) int { return a + b }\n' > m.go && ` +
			`printf 'package m\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) { if Add(1, 2) != 3 { t.Fatal() } }\n' > m_test.go && ` +
			`go build ./... && go test ./... 2>&1`, "ok"},
		{"git init and commit", `mkdir -p repo && cd repo && git init -q && echo hi > f && git add f && ` +
			`git -c user.name=t -c user.email=t@e commit -qm first && git log --oneline | wc -l`, "1"},
		{"the token stays out", `echo "token=[$GITHUB_TOKEN]"`, "token=[]"},
	}
	// The projects' files are made here; each command only runs the tools.
	for name, body := range map[string]string{
		"mk/Makefile":         "all: out.txt\n\nout.txt: in.txt\n\tcp in.txt out.txt\n",
		"mk/in.txt":           "made\n",
		"js/package.json":     `{"name":"proj","version":"1.0.0","dependencies":{"dep":"file:./dep"},"scripts":{"test":"node test.js"}}`,
		"js/test.js":          "if (require('dep').answer !== 42) process.exit(1); console.log('npm-tested');\n",
		"js/dep/package.json": `{"name":"dep","version":"1.0.0","main":"index.js"}`,
		"js/dep/index.js":     "exports.answer = 42;\n",
		// A wheel made on the spot: pip installs it with no index and no
		// network.
		"py/mkwheel.py": "import zipfile\nz = zipfile.ZipFile('demo-1.0-py3-none-any.whl', 'w')\n" +
			"z.writestr('demo.py', 'X = \"pip-installed\"\\n')\n" +
			"z.writestr('demo-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n')\n" +
			"z.writestr('demo-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n" +
			"z.writestr('demo-1.0.dist-info/RECORD', '')\nz.close()\n",
	} {
		p := filepath.Join(e.Work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chownTree(t, e, e.Work)
	if _, err := exec.LookPath("make"); err == nil {
		steps = append(steps, step{"make", "cd " + e.Work + "/mk && make -s && cat out.txt", "made"})
	} else {
		t.Log("make not installed: skipped")
	}
	if _, err := exec.LookPath("npm"); err == nil {
		steps = append(steps, step{"npm install and npm test", "cd " + e.Work + "/js && npm install --no-audit --no-fund --offline >/dev/null 2>&1; npm test 2>&1", "npm-tested"})
	} else {
		t.Log("npm not installed: skipped")
	}
	if exec.Command("python3", "-c", "import venv, ensurepip").Run() == nil {
		steps = append(steps, step{"pip install into a virtualenv", "cd " + e.Work + "/py && python3 -m venv v && python3 mkwheel.py && " +
			"v/bin/pip install -q --no-index demo-1.0-py3-none-any.whl 2>&1 && v/bin/python -c 'import demo; print(demo.X)'", "pip-installed"})
	} else {
		t.Log("python3's venv or ensurepip not installed: skipped")
	}
	for _, s := range steps {
		out, failed := testbin.Bash(t, cs, s.cmd, false)
		if failed || !strings.Contains(out, s.want) {
			t.Errorf("%s: %v\n%s", s.name, failed, out)
		}
	}
	// A background server on a local port, reached from another command.
	port, acc := listener(t) // only to find a free port number
	_ = acc
	srvPort := port + 1
	for i := 0; i < 20; i++ {
		if l, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", srvPort)); err == nil {
			l.Close()
			break
		}
		srvPort++
	}
	out, _ := testbin.Bash(t, cs, fmt.Sprintf("echo served > page.txt; python3 -m http.server %d --bind 127.0.0.1", srvPort), true)
	if !strings.Contains(out, "background") {
		t.Fatalf("background server: %s", out)
	}
	fetch := fmt.Sprintf(`for i in $(seq 50); do python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:%d/page.txt').read().decode())" 2>/dev/null && exit 0; sleep 0.2; done; exit 1`, srvPort)
	if out, failed := testbin.Bash(t, cs, fetch, false); failed || !strings.Contains(out, "served") {
		t.Errorf("fetching from the background server: %v %s", failed, out)
	}
}

func TestSandbox_required_without_Landlock_fails_at_start(t *testing.T) {
	t.Parallel()
	cmd := testbin.ServeCmd(t, binary, "", "--sandbox", "required")
	cmd.Env = append(cmd.Env, sandbox.LayersEnv+"=namespaces")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err == nil || !errorsAs(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("serve --sandbox required without Landlock: err %v, output %s", err, out)
	}
	if !strings.Contains(string(out), "--sandbox required: Landlock is not available") {
		t.Errorf("the message does not say why: %s", out)
	}
	// auto starts with what there is.
	cmd = testbin.ServeCmd(t, binary, "", "--sandbox", "auto")
	cmd.Env = append(cmd.Env, sandbox.LayersEnv+"=none")
	cmd.Stdin = strings.NewReader("")
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "sandbox: no layer available") {
		t.Errorf("auto without layers: %s", out)
	}
}

func errorsAs(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

// TestSandbox_questions: a confined command needs no question where only
// the kernel's confinement was in doubt (autoAllowBashIfSandboxed), and an
// excluded command runs outside the sandbox, never without a question.
func TestSandbox_questions(t *testing.T) {
	t.Parallel()
	sandboxenv.RequireLayers(t, binary, "namespaces,landlock")
	u := sandboxenv.Users(t)[0]
	// A program no rule allows, writing inside the working directory: the
	// client cannot be asked, so only the sandbox lets it run.
	write := `cp .mcp.json copy.json`
	for _, tc := range []struct {
		name    string
		args    []string
		layers  string // AGENT_MCP_SANDBOX_LAYERS, when set
		wantRan bool
	}{
		{"sandboxed runs without a question", nil, "", true},
		{"unsandboxed is asked about", []string{"--sandbox", "off"}, "", false},
		{"autoAllowBashIfSandboxed false is asked about", []string{"--settings", `{"sandbox":{"autoAllowBashIfSandboxed":false}}`}, "", false},
		{"an excluded command is asked about", []string{"--settings", `{"sandbox":{"excludedCommands":["cp"]}}`}, "", false},
		// Landlock cannot keep .mcp.json or a Read-denied file inside
		// the working directory from a program the parser cannot see.
		{"with Landlock alone a command is asked about", nil, "landlock", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := sandboxenv.New(t, binary, u)
			argv := append([]string{"serve", "--cwd", e.Work, "--state-dir", e.State, "--permission-mode", "default"}, tc.args...)
			cmd := exec.Command(e.Bin, argv...)
			cmd.Env = append(testbin.HermeticEnv(t), "HOME="+e.Home)
			if tc.layers != "" {
				sandboxenv.RequireLayers(t, binary, tc.layers)
				cmd.Env = append(cmd.Env, sandbox.LayersEnv+"="+tc.layers)
			}
			cs := testbin.Stdio(t, cmd, nil)
			out, _ := testbin.Bash(t, cs, write, false)
			_, err := os.Stat(filepath.Join(e.Work, "copy.json"))
			if ran := err == nil; ran != tc.wantRan {
				t.Errorf("ran = %v, want %v: %s", ran, tc.wantRan, out)
			}
			if tc.name == "an excluded command is asked about" && !strings.Contains(out, "excludedCommands") {
				t.Errorf("the refusal does not say the command is excluded: %s", out)
			}
		})
	}
	// In bypass mode an excluded command runs, outside the sandbox: it
	// can write where a confined one cannot.
	e := sandboxenv.New(t, binary, u)
	cs, _ := e.Serve(t, "namespaces,landlock", nil, "--settings", `{"sandbox":{"excludedCommands":["touch"]}}`)
	testbin.Bash(t, cs, "touch "+filepath.Join(e.Outside, "excluded.txt"), false)
	testbin.Bash(t, cs, "cp /dev/null "+filepath.Join(e.Outside, "confined.txt"), false)
	if _, err := os.Stat(filepath.Join(e.Outside, "excluded.txt")); err != nil {
		t.Errorf("the excluded command did not run outside the sandbox: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.Outside, "confined.txt")); err == nil {
		t.Error("a confined command wrote outside the writable roots")
	}
}

// TestSandboxCheck_says_one_thing: `sandbox check` does not say "limits:
// yes" where the sandbox, with these layers, caps no command, and says why
// a nested user namespace was refused rather than unshare's "No space
// left on device" (the sandbox's limit of user namespaces inside it).
func TestSandboxCheck_says_one_thing(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "sandbox", "check")
	cmd.Env = testbin.HermeticEnv(t)
	out, _ := cmd.CombinedOutput()
	said := string(out)
	var limits string
	for _, l := range strings.Split(said, "\n") {
		if strings.HasPrefix(l, "limits:") {
			limits = l
		}
	}
	if strings.Contains(said, "no per-command process or memory limit") && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(limits, "limits:")), "yes") {
		t.Errorf("the limits line says yes where the sandbox sets none:\n%s", said)
	}
	if !strings.Contains(said, "namespaces: yes") {
		return // no namespaces layer: no nested user namespace to refuse
	}
	for _, l := range strings.Split(said, "\n") {
		if strings.Contains(l, "user namespaces inside the sandbox refused") {
			if !strings.Contains(l, "max_user_namespaces") || !strings.Contains(l, "not a full disk") {
				t.Errorf("the user namespace check does not say what refused it:\n%s", l)
			}
			return
		}
	}
	t.Errorf("no user namespace check:\n%s", said)
}

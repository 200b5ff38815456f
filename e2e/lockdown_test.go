//go:build !windows

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/sandbox"
)

// The lockdown tests: what a command run as root (or as an ordinary user)
// in the sandbox could do to the machine and to its own launcher with
// Landlock alone, as in a container without user namespaces, and with the
// namespaces too. Each attack is a command a prompt-injected model could
// send, run through the real binary over MCP; it prints PWNED (built at
// run time, so the command's own text never holds it) when the kernel let
// it through. Secrets are searched for as patterns (CMDLINE[S]ECRET) that
// a search's own command line does not match. testdata/attacker is the
// compiled program most attacks use.

// attackerBinary builds testdata/attacker as a module of its own, into a
// directory every test user can read.
var attackerBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "agent-mcp-attacker-")
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile(filepath.Join("testdata", "attacker", "main.go"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module attacker\n\ngo 1.21\n"), 0o644); err != nil {
		return "", err
	}
	gobin, err := sandboxenv.GoBinary()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "attacker")
	cmd := exec.Command(gobin, "build", "-o", out, ".")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the attacker: %v\n%s", err, b)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	if os.Getuid() == 0 {
		// A set-user-ID root copy, as a command could find one on the
		// machine: exec must not make it root.
		suid := filepath.Join(dir, "attacker-suid")
		if b, err := exec.Command("cp", out, suid).CombinedOutput(); err != nil {
			return "", fmt.Errorf("copying the attacker: %v %s", err, b)
		}
		if err := os.Chmod(suid, 0o4755); err != nil {
			return "", err
		}
	}
	return out, nil
})

// attack is one command and what shows it worked.
type attack struct {
	name, cmd string
	// exit, when not empty, is the text the result must hold (the
	// command's own exit code, not a spoofed one).
	want string
}

// pwned is the marker an attack prints when it worked; commands build it
// at run time as "$P".
const pwned = "PWNED"

// lockdownAttacks are the attacks on capabilities, the host's /proc,
// SysV IPC, the launcher, set-user-ID bits and the session keyring, for a
// server running as uid with the given secrets planted.
func lockdownAttacks(a string, uid int, shm, msg string) []attack {
	suid := a + "-suid"
	caps := `Cap(Inh|Prm|Eff|Amb)`
	if uid == 0 {
		caps = `Cap(Inh|Prm|Eff|Amb|Bnd)`
	}
	list := []attack{
		// 1: capabilities.
		{"capability sets", `grep -E '^` + caps + `:' /proc/self/status | grep -v '0000000000000000$' | sed "s/^/$P cap /"`, ""},
		{"sethostname", a + ` sethostname`, ""},
		{"interface flags (CAP_NET_ADMIN)", a + ` ifflags`, ""},
		{"ip link set lo up", `ip link set lo up 2>&1 && echo "$P ip link"`, ""},
		{"ip addr add", `ip addr add 127.254.0.77/32 dev lo 2>&1 && { echo "$P ip addr"; ip addr del 127.254.0.77/32 dev lo; }`, ""},
		{"mknod of a block device", `mknod sda b 8 0 2>&1 && echo "$P mknod"; ` + a + ` mknod sdb`, ""},
		{"chown to another user", `touch owned && ` + a + ` chown owned`, ""},
		{"capsh --caps", `capsh --caps=cap_sys_admin+eip -- -c '` + a + ` sethostname' 2>&1`, ""},
		{"setpriv --ambient-caps", `setpriv --inh-caps=+sys_admin --ambient-caps=+sys_admin ` + a + ` sethostname 2>&1`, ""},
		{"prctl PR_CAP_AMBIENT_RAISE", a + ` ambient`, ""},
		{"capset", a + ` capset`, ""},
		{"a set-user-ID root helper", `test -u ` + suid + ` && { ` + suid + ` euid; ` + suid + ` sethostname; }`, ""},
		{"su root", `su -c "grep -E '^CapEff' /proc/self/status" root </dev/null 2>&1 | grep -v '0000000000000000$' | grep CapEff | sed "s/^/$P su /"`, ""},
		// 3: the host's /proc: the server's token in its command line
		// and its environment, through every process in reach.
		{"token in a command line", `grep -a -l "CMDLINE[S]ECRET" /proc/[0-9]*/cmdline 2>/dev/null | sed "s/^/$P cmdline /"`, ""},
		{"token in the command's environment", `env | grep "ENV[S]ECRET" | sed "s/^/$P env /"; grep -a -c "ENV[S]ECRET" /proc/self/environ | grep -v '^0' | sed "s/^/$P self environ /"`, ""},
		{"token in the launcher's and the server's environment", `srv=$(awk '{print $4}' /proc/$PPID/stat); for p in $PPID $srv 1; do grep -a -l "ENV[S]ECRET" /proc/$p/environ 2>/dev/null | sed "s/^/$P environ /"; done`, ""},
		{"client token anywhere in /proc", `grep -a -l "CLIENT[S]ECRET" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | sed "s/^/$P client token /"`, ""},
		{"the server's descriptors", `srv=$(awk '{print $4}' /proc/$PPID/stat); for f in /proc/$srv/fd/*; do readlink $f; done 2>/dev/null | head -3 | sed "s/^/$P server fd /"`, ""},
		{"/proc/1/root", `ls /proc/1/root/ 2>/dev/null | head -1 | sed "s/^/$P proc1 root /"`, ""},
		// 2: the launcher.
		{"ptrace the launcher", a + ` ptrace $PPID`, ""},
		{"SIGSTOP the launcher", a + ` signal $PPID 19`, ""},
		{"SIGSTOP the launcher through a pidfd", a + ` pidfd-signal $PPID 19`, ""},
		{"the launcher's descriptors", `for f in /proc/$PPID/fd/* /proc/$PPID/task/*/fd/*; do readlink $f; done 2>/dev/null | sed "s/^/$P launcher fd /"`, ""},
		{"the launcher's memory", a + ` read /proc/$PPID/mem`, ""},
		{"status spoofed through /proc/PPID/fd/3", `echo 0 > /proc/$PPID/fd/3; exit 7`, "Exit code 7"},
		{"status spoofed through a thread's fd", `for f in /proc/$PPID/task/*/fd/3; do echo 0 > $f; done; exit 7`, "Exit code 7"},
		{"status spoofed through pidfd_getfd", a + ` pidfd-getfd $PPID 3; exit 7`, "Exit code 7"},
		// 30.8: set-user-ID and set-group-ID bits, device nodes.
		{"chmod u+s", `cp /bin/sh sush && chmod u+s sush 2>&1; chmod 4755 sush 2>&1; chmod g+s sush 2>&1; test -u sush -o -g sush && echo "$P chmod"`, ""},
		{"perl chmod", `cp /bin/sh sush2 && perl -e 'chmod 04755, "sush2" or print "refused: $!\n"'; test -u sush2 && echo "$P perl chmod"`, ""},
		{"install -m 4755", `install -m 4755 /bin/sh sush3 2>&1; test -u sush3 && echo "$P install"`, ""},
		{"cp -p of a set-user-ID file", `cp -p /usr/bin/su sush4 2>&1; test -u sush4 && echo "$P cp -p"`, ""},
		{"a hard link to a set-user-ID file", `ln /usr/bin/su sush5 2>&1; test -u sush5 && echo "$P ln"`, ""},
		{"open with O_CREAT and mode 4755", a + ` create-suid sush6; test -u sush6 && echo "$P create"`, ""},
		{"mknod of a set-user-ID file", a + ` mknod-suid sush7; test -u sush7 && echo "$P mknod-suid"`, ""},
		{"fchmodat2", `touch sush8; ` + a + ` fchmodat2 sush8; test -u sush8 && echo "$P fchmodat2"`, ""},
		{"openat2 with mode 4755", a + ` openat2 sush9; test -u sush9 && echo "$P openat2"`, ""},
		// The session keyring the server was started with.
		{"the server's session keyring", a + ` keyring-read`, ""},
		{"the server's key by id", a + ` keyring-read-id`, ""},
	}
	if shm != "" {
		// 4: SysV IPC of another user's process (no IPC namespace with
		// Landlock alone).
		list = append(list,
			attack{"another user's SysV segment", a + ` shmread ` + shm, ""},
			attack{"perl shmread", `perl -e 'shmread(` + shm + `, $v, 0, 9) ? print "$ENV{P} perl shmread $v\n" : print "refused: $!\n"'`, ""},
			attack{"another user's message queue", a + ` msgread ` + msg, ""},
			attack{"perl msgrcv", `perl -e 'msgrcv(` + msg + `, $m, 64, 0, 04000) ? print "$ENV{P} perl msgrcv $m\n" : print "refused: $!\n"'`, ""},
			// Last: these remove what the ones above read.
			attack{"removing another user's SysV segment", a + ` shmrm ` + shm, ""},
			attack{"ipcrm of another user's queue", `ipcrm -q ` + msg + ` 2>&1 && echo "$P ipcrm -q"`, ""})
	}
	if runtime.GOARCH == "amd64" {
		list = append(list, attack{"perl syscall sethostname", `perl -e '$h = "x"; $r = syscall(170, $h, 0); print $r == 0 ? "$ENV{P} perl sethostname\n" : "refused: $!\n"'`, ""})
	}
	return list
}

// ipcOf makes a SysV segment and message queue holding secrets, owned by
// uid 4242 (mode 0600), and returns their ids; "" when the tests cannot
// switch users.
func ipcOf(t *testing.T, a string) (shm, msg string) {
	setpriv, err := exec.LookPath("setpriv")
	if os.Getuid() != 0 || err != nil {
		return "", ""
	}
	run := func(args ...string) string {
		out, err := exec.Command(setpriv, append([]string{"--reuid=4242", "--regid=4242", "--clear-groups", a}, args...)...).CombinedOutput()
		s := strings.TrimSpace(string(out))
		if err != nil || strings.Trim(s, "0123456789") != "" {
			t.Fatalf("attacker %v: %v %s", args, err, out)
		}
		return s
	}
	shm, msg = run("shmmake", "SHMSECRET"), run("msgmake", "MSGSECRET")
	t.Cleanup(func() {
		_ = exec.Command("ipcrm", "-m", shm, "-q", msg).Run()
	})
	return shm, msg
}

func TestSandbox_lockdown(t *testing.T) {
	t.Parallel()
	a, err := attackerBinary()
	if err != nil {
		t.Fatal(err)
	}
	sandboxenv.ForEachLayers(t, binary, []string{"landlock", "landlock,cgroup", "namespaces,landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		shm, msg := ipcOf(t, a)
		// The server starts in a session keyring of its own holding a
		// key, with its token on its command line and in its
		// environment.
		e.User.Wrap = append(append([]string{}, e.User.Wrap...), a, "keyring-exec", "KEYSECRET")
		cs, _ := e.Serve(t, layers, []string{"AGENT_MCP_TOKEN=ENVSECRET", "AGENT_MCP_CLIENT_TOKENS=h=CLIENTSECRET", "P=" + pwned},
			"--token", "CMDLINESECRET")
		if err := os.WriteFile(filepath.Join(e.Work, "secret600"), []byte("DACSECRET"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(e.Work, "secret600"), 4242, 4242); err != nil && os.Getuid() == 0 {
			t.Fatal(err)
		}
		attacks := lockdownAttacks(a, e.User.UID, shm, msg)
		if os.Getuid() == 0 {
			attacks = append(attacks, attack{"another user's 0600 file (CAP_DAC_OVERRIDE)", `cat secret600 2>&1 | sed "s/DAC[S]ECRET/$P dac/"`, ""})
		}
		for _, at := range attacks {
			out, _ := testbin.Bash(t, cs, at.cmd+`; echo "RAN"`, false)
			switch {
			case strings.Contains(out, pwned):
				t.Errorf("%s: the attack worked:\n%s", at.name, out)
			case at.want != "" && !strings.Contains(out, at.want):
				t.Errorf("%s: the result does not hold %q:\n%s", at.name, at.want, out)
			case at.want == "" && !strings.Contains(out, "RAN"):
				t.Errorf("%s: the command did not run:\n%s", at.name, out)
			}
		}
		// What the commands left on disk: no set-user-ID or set-group-ID
		// file, no device node, no file given away.
		_ = filepath.Walk(e.Work, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return nil
			}
			if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 && !fi.IsDir() {
				t.Errorf("%s is set-user-ID or set-group-ID: %v", p, fi.Mode())
			}
			if fi.Mode()&os.ModeDevice != 0 {
				t.Errorf("%s is a device node: %v", p, fi.Mode())
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == 4242 && fi.Name() != "secret600" {
				t.Errorf("%s was given to uid 4242", p)
			}
			return nil
		})
		if shm != "" {
			if out, err := exec.Command("ipcs", "-m", "-i", shm).CombinedOutput(); err != nil {
				t.Errorf("the other user's SysV segment is gone: %v %s", err, out)
			}
		}
		// Last: SIGKILL the launcher. It must live on, and the command's
		// processes with it end at the session's end as ever.
		out, _ := testbin.Bash(t, cs, a+` signal $PPID 9; echo "RAN"`, false)
		if strings.Contains(out, pwned) || !strings.Contains(out, "RAN") {
			t.Errorf("SIGKILL the launcher:\n%s", out)
		}
	})
}

// TestSandbox_unconfined_notice_reaches_the_model: where the machine
// offers no layer (AGENT_MCP_SANDBOX_LAYERS=none) and --sandbox auto runs
// commands unconfined, the model is told so in Bash's description, in
// each Bash result and in the server's instructions; where a layer holds,
// nowhere.
func TestSandbox_unconfined_notice_reaches_the_model(t *testing.T) {
	t.Parallel()
	for _, layers := range []string{"none", "landlock"} {
		t.Run(layers, func(t *testing.T) {
			t.Parallel()
			if layers != "none" {
				sandboxenv.RequireLayers(t, binary, layers)
			}
			e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
			cs, _ := e.Serve(t, layers, nil)
			want := layers == "none"
			const notice = "Bash commands run unconfined"
			if got := strings.Contains(cs.InitializeResult().Instructions, notice); got != want {
				t.Errorf("instructions hold the notice: %v, want %v: %q", got, want, cs.InitializeResult().Instructions)
			}
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if tool.Name == "Bash" && strings.Contains(tool.Description, notice) != want {
					t.Errorf("Bash's description holds the notice: %v, want %v", !want, want)
				}
			}
			for _, bg := range []bool{false, true} {
				out, _ := testbin.Bash(t, cs, "echo hello; exit 3", bg)
				if strings.Contains(out, notice) != want {
					t.Errorf("background %v: the result holds the notice: %v, want %v:\n%s", bg, !want, want, out)
				}
				if !bg && !strings.HasPrefix(out, "Exit code 3") {
					t.Errorf("the result no longer starts with its exit code:\n%s", out)
				}
			}
		})
	}
}

// TestSandbox_network_sentence_reaches_the_model: Bash's description says
// the network policy in one sentence wherever a layer confines commands
// (the proxy with the namespaces layer; the proxy or no network with
// Landlock alone, as the machine allows), and nothing where commands run
// unconfined. The description is made before the namespaces probe has run,
// so this fails if the sentence waits on it.
func TestSandbox_network_sentence_reaches_the_model(t *testing.T) {
	t.Parallel()
	const proxy = "Network: commands reach the network only through a proxy"
	for _, layers := range []string{"none", "landlock", "namespaces,landlock"} {
		t.Run(layers, func(t *testing.T) {
			t.Parallel()
			if layers != "none" {
				sandboxenv.RequireLayers(t, binary, layers)
			}
			e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
			cs, _ := e.Serve(t, layers, nil)
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var desc string
			for _, tool := range list.Tools {
				if tool.Name == "Bash" {
					desc = tool.Description
				}
			}
			switch {
			case layers == "none" && strings.Contains(desc, "Network:"):
				t.Errorf("unconfined, yet the description speaks of a network policy:\n%s", desc)
			case layers == "landlock" && !strings.Contains(desc, proxy) && !strings.Contains(desc, "Network: commands have no network access"):
				t.Errorf("Landlock alone: no network sentence in Bash's description:\n%s", desc)
			case strings.Contains(layers, "namespaces") && !strings.Contains(desc, proxy):
				t.Errorf("namespaces: Bash's description does not say the proxy asks:\n%s", desc)
			}
		})
	}
}

// TestSandbox_limits: where a command runs in a cgroup of its own, the
// sandbox's limits cap its processes (a fork bomb stops there) and its
// memory (the OOM killer ends the command); with Landlock alone and no
// cgroup nothing caps them, as the docs say.
func TestSandbox_limits(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl not installed")
	}
	sandboxenv.ForEachLayers(t, binary, []string{"landlock,cgroup", "namespaces,landlock,cgroup", "landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		cs, _ := e.Serve(t, layers, []string{"P=" + pwned}, "--settings", `{"sandbox":{"limits":{"processes":64,"memory":"128MiB"},"env":{"allow":["P"]}}}`)
		capped, _ := testbin.Bash(t, cs, `grep -h -E '^[0-9]+:(pids|memory):|^0::' /proc/self/cgroup`, false)
		// sandbox check says whether the limits can be set here with
		// these layers, as this user.
		argv := append(append([]string{}, e.User.Wrap...), e.Bin, "sandbox", "check")
		check := exec.Command(argv[0], argv[1:]...)
		check.Env = append(testbin.HermeticEnv(t), sandbox.LayersEnv+"="+layers, "HOME="+e.Home)
		said, _ := check.CombinedOutput()
		held := strings.Contains(string(said), "each command limited to")
		if strings.Contains(layers, "cgroup") && !held {
			t.Skipf("no limit can be set with %s for uid %d here: %s", layers, e.User.UID, said)
		}
		// Without a cgroup, an unprivileged command in a user namespace of
		// its own is still capped in processes (RLIMIT_NPROC counted there),
		// and sandbox check says so; the memory cap needs the cgroup.
		procsOnly := held && strings.Contains(string(said), "RLIMIT_NPROC in its user namespace")
		if held && !procsOnly && !strings.Contains(capped, "agent-mcp-") {
			t.Fatalf("sandbox check says limits hold, but the command is in no cgroup of its own: %s", capped)
		}
		forks := `perl -e '@k = (); for (1..100) { $p = fork; last unless defined $p; if (!$p) { sleep 60; exit 0 } push @k, $p } ` +
			`print scalar(@k) >= 100 ? "$ENV{P} forked " : "forked ", scalar(@k), "\n"; kill 9, @k'; echo RAN`
		mem := `perl -e '$x = "a" x (300*1024*1024); print "$ENV{P} allocated 300 MiB\n"'; echo RAN`
		for _, c := range []string{forks, mem} {
			out, _ := testbin.Bash(t, cs, c, false)
			held := held && (c == forks || !procsOnly)
			switch {
			case !strings.Contains(out, "RAN"):
				t.Errorf("the command did not run:\n%s", out)
			case held && strings.Contains(out, pwned):
				t.Errorf("the limit did not hold:\n%s\n(cgroups: %s)", out, capped)
			case !held && !strings.Contains(out, pwned):
				t.Errorf("without a cgroup nothing caps the command, yet:\n%s", out)
			}
		}
	})
}

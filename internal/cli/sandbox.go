package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/sandbox/proc"
	"github.com/agent-mcp/agent-mcp/tools/shell"
)

// newSandbox builds Bash's sandbox from [workspaceFlags.sandboxOptions].
func (w *workspaceFlags) newSandbox(s *settings.Settings, home string) (*sandbox.Sandbox, error) {
	opts, err := w.sandboxOptions(s, home)
	if err != nil {
		return nil, err
	}
	return sandbox.New(opts)
}

// sandboxOptions is Bash's sandbox as --sandbox, the environment and the
// settings make it: their sandbox object, Edit allow rules' directories
// (writable), Edit deny rules (read-only) and Read deny rules (masked),
// with the permission package's lists of credential and protected paths.
// The sandbox takes these as facts; the policy is decided here.
func (w *workspaceFlags) sandboxOptions(s *settings.Settings, home string) (sandbox.Options, error) {
	mode := sandbox.ModeAuto
	if w.sandbox != "" {
		m, err := sandbox.ParseMode(w.sandbox)
		if err != nil {
			return sandbox.Options{}, fmt.Errorf("--sandbox: %w", err)
		}
		mode = m
	} else if e := s.Sandbox.Enabled; e != nil && !*e {
		mode = sandbox.ModeOff
	}
	opts := sandbox.Options{
		Mode: mode, Home: home,
		BuildCaches: s.Sandbox.BuildCaches, AllowUserNamespaces: s.Sandbox.AllowUserNamespaces,
		Limits:        sandbox.Limits{Processes: s.Sandbox.LimitProcesses, Memory: s.Sandbox.LimitMemory},
		AllowedLayers: w.env.layers,
	}
	// Off, there is no proxy to resolve names for (sandbox.New makes no
	// sandbox).
	if w.env.hosts != "" && mode != sandbox.ModeOff {
		h, err := sandbox.ParseHosts(w.env.hosts)
		if err != nil {
			return sandbox.Options{}, err
		}
		opts.Hosts = h
	}
	// The one list of credential paths: the permission check refuses
	// reading them, the sandbox masks them.
	creds := permissions.Credentials{Home: home, StateHome: stateHome(), Files: w.secretFiles}
	opts.Credentials = func(stateDir string) []string {
		c := creds
		c.StateDir = stateDir
		return c.Paths()
	}
	opts.Protected = func(roots []string) []string { return permissions.SandboxReadOnlyPaths(roots, home) }
	opts.ProtectedNames = permissions.ProtectedNames()
	// The home is private to a command but for the toolchains' places
	// and what the settings allow (home.go); denyRead's paths stay
	// unreadable like a Read deny rule's.
	if home != "" {
		opts.HomeReadable = homeReadable(s, home)
	}
	for _, d := range s.Sandbox.DenyRead {
		opts.ReadDeny = append(opts.ReadDeny, sandbox.Pattern{Base: d})
	}
	// agent-mcp's user configuration (settings, trust store) and Claude
	// Code's are never a command's to write.
	loc := settings.DefaultLocations("", w.env.configDir)
	opts.Pinned = append(opts.Pinned, loc.ConfigDir, loc.ClaudeDir)
	if err := egressConfig(&opts, s); err != nil {
		return sandbox.Options{}, err
	}
	if mode != sandbox.ModeOff {
		if err := w.credentialOptions(&opts, s); err != nil {
			return sandbox.Options{}, err
		}
	}
	for _, r := range s.Rules.Rules(permissions.Allow) {
		base, glob, ok := r.PathPattern()
		if ok && r.Tool == "Read" {
			opts.ReadAllow = append(opts.ReadAllow, sandbox.Pattern{Base: base, Glob: glob})
		}
		if !ok || r.Tool != "Edit" {
			continue
		}
		dir := literalDir(base, glob)
		if st, err := os.Stat(dir); err == nil && st.IsDir() && dir != "/" {
			opts.Writable = append(opts.Writable, dir)
		}
	}
	for _, r := range s.Rules.Rules(permissions.Deny) {
		base, glob, ok := r.PathPattern()
		if !ok {
			continue
		}
		switch r.Tool {
		case "Edit":
			opts.ReadOnly = append(opts.ReadOnly, sandbox.Pattern{Base: base, Glob: glob})
		case "Read":
			opts.ReadDeny = append(opts.ReadDeny, sandbox.Pattern{Base: base, Glob: glob})
		}
	}
	return opts, nil
}

// bashSandbox is Bash's sandbox as the permission check asks about it:
// the kernel mechanism, and the lines the settings exclude from it
// (sandbox.excludedCommands, which the Bash tool decides).
type bashSandbox struct {
	sb       *sandbox.Sandbox
	excluded shell.ExcludedCommands
}

// Confines reports whether line runs confined: a layer is in use and the
// line is not an excluded one.
func (b bashSandbox) Confines(line string) bool { return b.sb.Confines() && !b.excluded.Match(line) }

// Excluded reports whether line is configured to run outside.
func (b bashSandbox) Excluded(line string) bool { return b.sb != nil && b.excluded.Match(line) }

// HoldsPaths is [sandbox.Sandbox.HoldsPaths].
func (b bashSandbox) HoldsPaths() bool { return b.sb.HoldsPaths() }

// HoldsNetwork is [sandbox.Sandbox.HoldsNetwork].
func (b bashSandbox) HoldsNetwork() bool { return b.sb.HoldsNetwork() }

// envLine says, in `sandbox check`, that a command's environment is an
// allow-list and how much of env it withholds, naming a few of those.
func envLine(env, allow []string) string {
	kept := proc.Allowed(env, allow)
	var withheld []string
	for _, kv := range env {
		if !slices.Contains(kept, kv) {
			k, _, _ := strings.Cut(kv, "=")
			withheld = append(withheld, k)
		}
	}
	line := fmt.Sprintf("environment: an allow-list: %d of this environment's %d variables reach a command (what a shell and a build need, and the %d names of sandbox.env.allow)",
		len(kept), len(env), len(allow))
	if len(withheld) > 0 {
		sort.Strings(withheld)
		more := ""
		if len(withheld) > 5 {
			withheld, more = withheld[:5], ", ..."
		}
		line += "; withheld: " + strings.Join(withheld, ", ") + more
	}
	return line
}

// literalDir is base joined with the glob's leading components that hold
// no wildcard.
func literalDir(base, glob string) string {
	dir := base
	for _, seg := range strings.Split(glob, "/") {
		if seg == "" || strings.ContainsAny(seg, `*?[\{`) {
			break
		}
		dir = filepath.Join(dir, seg)
	}
	return dir
}

func cmdSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sandbox", "sandbox check [flags]",
		"Prints which kernel features Bash's sandbox can use on this machine, then runs a\n"+
			"self-test: sandboxed commands must write inside a working directory and fail\n"+
			"to write outside it or to a protected path.", stdout, stderr)
	var w workspaceFlags
	w.add(fs.FlagSet)
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fs.usage(stdout)
		return flag.ErrHelp
	case len(args) == 0:
		fmt.Fprintln(stderr, "sandbox needs a subcommand: check")
		fs.usage(stderr)
		return errUsage
	case args[0] != "check":
		fmt.Fprintf(stderr, "agent-mcp sandbox: unknown subcommand %q (the one there is: check)\n", args[0])
		fs.helpHint()
		return errUsage
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if w.sandbox == "" {
		w.sandbox = string(sandbox.ModeAuto)
	}
	sup := sandbox.Probe("/proc/self/exe", w.env.layers)
	fmt.Fprintf(stdout, "landlock:   %s\n", supportLine(sup.Landlock > 0, fmt.Sprintf("ABI %d", sup.Landlock), sup.LandlockErr))
	fmt.Fprintf(stdout, "namespaces: %s\n", supportLine(sup.Namespaces, "user, mount, pid, ipc, net", sup.NamespacesErr))
	fmt.Fprintf(stdout, "cgroup:     %s\n", supportLine(sup.Cgroup != "", "a cgroup per command beneath "+sup.Cgroup+
		" (needs root or a delegated cgroup, e.g. systemd-run --user --scope -p Delegate=yes)", sup.CgroupErr))
	home, _ := os.UserHomeDir()
	sb, err := w.newSandbox(&settings.Settings{Rules: &permissions.RuleSet{}}, home)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "limits:     %s\n", limitsLine(sup, sb.Describe()))
	if line := tiocstiLine(); line != "" {
		fmt.Fprintf(stdout, "terminal:   %s\n", line)
	}
	fmt.Fprintln(stdout, sb.Describe())
	project := w.cwd
	if project == "" {
		project, _ = os.Getwd()
	}
	var envAllow []string
	if perm, err := w.permissionSetup(project); err != nil {
		fmt.Fprintf(stdout, "language servers: not listed: %v\n", err)
	} else if servers, err := w.lspServers(perm, project); err != nil {
		envAllow = perm.settings.Sandbox.EnvAllow
		fmt.Fprintf(stdout, "language servers: not listed: %v\n", err)
	} else {
		envAllow = perm.settings.Sandbox.EnvAllow
		printLSPServers(stdout, servers, w.lsp)
	}
	fmt.Fprintln(stdout, envLine(os.Environ(), envAllow))
	if !sb.Layers().Any() {
		return errors.New("no sandbox layer is available: commands would run unconfined")
	}
	return selfTest(ctx, sb, stdout)
}

// tiocstiLine says whether the kernel lets a process type into a terminal
// that is not its controlling one (TIOCSTI with CAP_SYS_ADMIN): sandboxed
// commands hold no capability, but one run outside the sandbox as root
// could type into the terminal agent-mcp runs on through a descriptor of
// it (/proc/PID/fd). Empty where there is no such setting to read.
func tiocstiLine() string {
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	switch {
	case err == nil && strings.TrimSpace(string(b)) == "0":
		return "yes (TIOCSTI refused by the kernel: dev.tty.legacy_tiocsti=0)"
	case err == nil:
		return "no: TIOCSTI allowed with CAP_SYS_ADMIN (dev.tty.legacy_tiocsti=1): a command run outside the sandbox as root " +
			"(sandbox off, an excluded command) can type into the terminal agent-mcp runs on; sysctl dev.tty.legacy_tiocsti=0 refuses it"
	}
	return ""
}

// limitsLine says whether the sandbox, with the layers it uses, caps
// each command's processes and memory (desc is its Describe): the
// controllers can be there and still go unused (cgroup v1 with the
// namespaces layer).
func limitsLine(sup sandbox.Support, desc string) string {
	found := sup.Limits.Pids() && sup.Limits.Memory()
	if _, why, unused := strings.Cut(desc, "no per-command process or memory limit"); unused && found {
		why = strings.TrimSpace(strings.Trim(strings.TrimSpace(why), "()"))
		return fmt.Sprintf("no: %s (found: %s)", why, sup.Limits.String())
	}
	return supportLine(found, "pids and memory caps per command: "+sup.Limits.String(), sup.LimitsErr)
}

func supportLine(ok bool, what string, err error) string {
	if ok {
		return "yes (" + what + ")"
	}
	return fmt.Sprintf("no: %v", err)
}

// selfTest runs a few commands in the sandbox and checks what they could
// do on disk.
func selfTest(ctx context.Context, sb *sandbox.Sandbox, stdout io.Writer) error {
	tmp, err := os.MkdirTemp("", "agent-mcp-sandbox-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	work, outside, state := filepath.Join(tmp, "work"), filepath.Join(tmp, "outside"), filepath.Join(tmp, "state", "session")
	for _, d := range []string{filepath.Join(work, ".git"), outside, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(work, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		return err
	}
	run := func(script string) (string, error) {
		l, err := sb.Command(sandbox.Spec{Shell: "/bin/sh", Script: script, Dir: work,
			WorkDirs: []string{work}, StateDir: state}, 2*time.Second)
		if err != nil {
			return "", err
		}
		cmd := l.Cmd
		cmd.Dir, cmd.Env = work, append(os.Environ(), l.Env...)
		// A file, not a buffer: the shell writes it itself, so it is
		// complete when the shell's status comes (os/exec would copy a
		// buffer's output in a goroutine that Wait does not wait for).
		out, err := os.CreateTemp(tmp, "out-")
		if err != nil {
			return "", err
		}
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
		err = cmd.Start()
		l.Started(err)
		if err != nil {
			return "", err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		go func() {
			<-cctx.Done()
			_ = cmd.Process.Kill()
		}()
		code := l.Wait()
		b, rerr := os.ReadFile(out.Name())
		if rerr != nil {
			return "", rerr
		}
		if code != 0 {
			return string(b), fmt.Errorf("exit status %d", code)
		}
		return string(b), nil
	}
	failed := 0
	check := func(name string, ok bool, detail string) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(stdout, "  %s %s%s\n", mark, name, detail)
	}
	out, err := run("echo in > inside.txt")
	_, statErr := os.Stat(filepath.Join(work, "inside.txt"))
	check("write inside the working directory", err == nil && statErr == nil, trimDetail(out))
	out, _ = run("echo out > " + filepath.Join(outside, "x.txt"))
	_, statErr = os.Stat(filepath.Join(outside, "x.txt"))
	check("write outside the writable roots refused", statErr != nil, trimDetail(out))
	guard, why := sb.FileGuard()
	if sb.Layers().Namespaces || guard {
		out, _ = run("echo '[alias]' >> .git/config")
		b, _ := os.ReadFile(filepath.Join(work, ".git", "config"))
		check("protected path .git/config stays unchanged", string(b) == "[core]\n", trimDetail(out))
	}
	if !sb.Layers().Namespaces {
		fmt.Fprintln(stdout, "  --   Edit-denied and Read-denied paths inside the working directories: not held by Landlock alone (the permission rules still judge commands)")
	}
	if guard {
		// The launcher's supervisor judges each creating call
		// (docs/sandbox.md): the name is never made, at any depth.
		out, _ = run("mkdir -p sub && echo 'touch pwned' > .envrc; echo 'touch pwned' > sub/.envrc")
		_, statErr = os.Lstat(filepath.Join(work, ".envrc"))
		_, subErr := os.Lstat(filepath.Join(work, "sub", ".envrc"))
		check("protected names refused as a command makes them, at any depth (.envrc, sub/.envrc)", statErr != nil && subErr != nil, trimDetail(out))
	} else {
		// No kernel mechanism here refuses a name that does not exist
		// yet: the server moves it aside as it appears (docs/sandbox.md).
		out, _ = run("echo 'touch pwned' > .envrc")
		_, statErr = os.Lstat(filepath.Join(work, ".envrc"))
		check("protected name that did not exist (.envrc) moved aside as the command made it (not refused by the kernel: moved after the fact; "+why+")", statErr != nil, trimDetail(out))
	}
	userNamespacesCheck(sb, run, check, stdout)
	secretsCheck(sb, stdout)
	buildCachesCheck(sb, run, check, stdout)
	out, _ = run("grep NoNewPrivs /proc/self/status")
	check("no_new_privs set", strings.Contains(out, "1"), trimDetail(out))
	lockdownCheck(sb, run, check, stdout)
	if sb.Layers().Cgroup {
		out, _ = run("grep '^0::' /proc/self/cgroup")
		check("own cgroup", strings.Contains(out, "/agent-mcp-"), trimDetail(out))
	}
	if sb.Layers().Namespaces {
		out, _ = run("ls /proc | grep -c '^[0-9]'")
		check("own PID namespace (few processes visible)", strings.TrimSpace(out) != "" && len(strings.TrimSpace(out)) <= 2, trimDetail(out))
	}
	if failed > 0 {
		return fmt.Errorf("%d self-test check(s) failed", failed)
	}
	fmt.Fprintln(stdout, "self-test passed")
	return nil
}

func trimDetail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return ": " + strings.ReplaceAll(s, "\n", " | ")
}

// buildCachesCheck tries to write into the user's first build cache,
// which no command may (each workspace has stand-ins its tools' variables
// point at), and says what Landlock alone leaves: a cache inside a
// working directory.
func buildCachesCheck(sb *sandbox.Sandbox, run func(string) (string, error), check func(string, bool, string), stdout io.Writer) {
	caches := sb.BuildCaches()
	if len(caches) == 0 {
		fmt.Fprintln(stdout, "  --   build caches: none configured (sandbox.buildCaches is empty): commands' go, npm, pip and cargo use the user's caches read-only")
		return
	}
	probe := filepath.Join(caches[0], ".agent-mcp-sandbox-check")
	out, _ := run("echo x > '" + strings.ReplaceAll(probe, "'", `'\''`) + "'; echo GOCACHE=$GOCACHE")
	_, statErr := os.Stat(probe)
	if statErr == nil {
		_ = os.Remove(probe)
	}
	check("the user's build caches unchanged by a command (its tools write stand-ins kept per workspace)", statErr != nil, trimDetail(out))
	if !sb.Layers().Namespaces {
		fmt.Fprintln(stdout, "  --   build caches inside a working directory: writable with Landlock alone (a home that is a working directory; only the namespaces layer binds them read-only there)")
	}
}

// userNamespacesCheck tries to make a user namespace inside the sandbox,
// which the namespaces layer refuses; Landlock alone does not.
func userNamespacesCheck(sb *sandbox.Sandbox, run func(string) (string, error), check func(string, bool, string), stdout io.Writer) {
	if !sb.Layers().Namespaces {
		fmt.Fprintln(stdout, "  --   user namespaces inside the sandbox: not refused by Landlock alone (Landlock refuses mounts inside them)")
		fmt.Fprintln(stdout, "  --   pathname unix sockets outside the writable roots: reachable with Landlock alone (its scoping covers abstract ones only)")
		return
	}
	out, _ := run("unshare -U true && echo MADE")
	detail := trimDetail(out)
	if strings.Contains(out, "No space left on device") {
		// ENOSPC from unshare(2): the count of user namespaces allowed
		// beneath the sandbox's own is used up (launcher's
		// refuseUserNamespaces), not a full disk.
		detail = ": by the sandbox's limit on the user namespaces made inside it (user.max_user_namespaces there; unshare reports it as ENOSPC, \"No space left on device\", not a full disk)"
	}
	check("user namespaces inside the sandbox refused", !strings.Contains(out, "MADE"), detail)
}

// lockdownCheck checks that a command holds no capability and reaches
// neither its launcher's status descriptor nor a set-user-ID bit, and
// says what the Landlock layer alone leaves shared: SysV IPC, and the
// limits where no cgroup holds the command.
func lockdownCheck(sb *sandbox.Sandbox, run func(string) (string, error), check func(string, bool, string), stdout io.Writer) {
	out, _ := run("grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status | grep -v '0000000000000000$'; echo END")
	check("no capability held", strings.TrimSpace(out) == "END", trimDetail(out))
	out, _ = run("touch suid-check && chmod u+s suid-check; test -u suid-check && echo SET; rm -f suid-check")
	check("set-user-ID bits refused", !strings.Contains(out, "SET"), trimDetail(out))
	out, _ = run("echo 0 > /proc/$PPID/fd/3 && echo WROTE")
	check("the launcher's status descriptor out of reach", !strings.Contains(out, "WROTE"), trimDetail(out))
	if !sb.Layers().Namespaces {
		fmt.Fprintln(stdout, "  --   SysV IPC: no IPC namespace with Landlock alone: the host's segments and queues are visible, reachable where their permissions admit the user (CAP_IPC_OWNER is dropped)")
	}
	if desc := sb.Describe(); !strings.Contains(desc, "each command limited to") {
		_, why, _ := strings.Cut(desc, "no per-command process or memory limit")
		fmt.Fprintf(stdout, "  --   per-command limits: none%s: nothing caps a command's processes or memory\n", why)
	}
}

package sandbox

import (
	"bufio"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agent-mcp/agent-mcp/internal/protect"
	"github.com/agent-mcp/agent-mcp/sandbox/egress"
	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// HiddenCommand is the first argument that makes agent-mcp act as the
// sandbox launcher ([Main]) instead of running a subcommand.
const HiddenCommand = launcher.HiddenCommand

// Main runs the hidden launcher: args are what follows [HiddenCommand].
// It returns the process exit status. (On Linux the launcher runs before
// main reaches a caller of this, from package launcher's initialisation.)
func Main(args []string) int { return launcher.Main(args) }

// Probe reports what this machine offers; launcherPath is the agent-mcp
// binary that tries the namespaces. allowed, when not nil, limits the
// layers reported as [Options.AllowedLayers] does.
func Probe(launcherPath string, allowed []string) Support {
	s := probeLandlock(allowed)
	probeProcesses(&s, launcherPath, allowed)
	return s
}

// probeLandlock asks the kernel for its Landlock ABI: one system call.
func probeLandlock(allowed []string) Support {
	var s Support
	s.Landlock, s.LandlockErr = launcher.LandlockABI()
	allowedLayers(&s, allowed)
	switch {
	case s.Landlock == 0:
		s.SupervisorErr = errors.New("no Landlock")
	case s.Landlock < 4:
		s.SupervisorErr = fmt.Errorf("the kernel's Landlock (ABI %d) has no TCP rules (ABI 4+, Linux 6.7+)", s.Landlock)
	default:
		s.SupervisorErr = launcher.SupervisorSupport()
	}
	return s
}

// probeProcesses tries the namespaces and a cgroup with the launcher: a
// child process, tens of milliseconds.
func probeProcesses(s *Support, launcherPath string, allowed []string) {
	s.NamespacesErr = launcher.ProbeNamespaces(launcherPath)
	s.Namespaces = s.NamespacesErr == nil
	s.Cgroup, s.CgroupErr = launcher.ProbeCgroup(launcherPath)
	allowedLayers(s, allowed)
	probeLimits(s)
}

// LayersEnv is the variable that, when set, limits the layers the sandbox
// may use to the comma separated list it holds ("namespaces", "landlock",
// "cgroup"; "none" for none): a test and diagnostic hook that simulates a
// machine offering less than this one. internal/cli reads it into
// [Options.AllowedLayers].
const LayersEnv = "AGENT_MCP_SANDBOX_LAYERS"

// Mode says how strongly the sandbox is wanted.
type Mode string

// Modes.
const (
	// ModeAuto uses the strongest layers the machine offers, and runs
	// commands unsandboxed where it offers none.
	ModeAuto Mode = "auto"
	// ModeRequired refuses to start without at least Landlock.
	ModeRequired Mode = "required"
	// ModeOff runs commands without a sandbox.
	ModeOff Mode = "off"
)

// ParseMode reads a --sandbox value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModeAuto, ModeRequired, ModeOff:
		return m, nil
	case "":
		return ModeAuto, nil
	}
	return "", fmt.Errorf("sandbox mode %q is not one of auto, required, off", s)
}

// Layers are the confinement layers in use.
type Layers struct {
	// Namespaces: user, mount, PID and IPC namespaces (and a network
	// namespace when the network is off).
	Namespaces bool
	// Landlock is the Landlock ABI version in use; 0 when Landlock is not.
	Landlock int
	// Cgroup: without a PID namespace, each command's processes are held
	// in a cgroup of their own (else only by the launcher as a child
	// subreaper).
	Cgroup bool
}

// processes names what holds a command's processes.
func (l Layers) processes() string {
	switch {
	case l.Namespaces:
		return "a PID namespace"
	case l.Cgroup:
		return "a cgroup"
	}
	return "a subreaper"
}

// Any reports whether at least one layer is in use.
func (l Layers) Any() bool { return l.Namespaces || l.Landlock > 0 }

// String names the layers, e.g. "namespaces+landlock(ABI 7)".
func (l Layers) String() string {
	var parts []string
	if l.Namespaces {
		parts = append(parts, "namespaces")
	}
	if l.Landlock > 0 {
		parts = append(parts, fmt.Sprintf("landlock(ABI %d)", l.Landlock))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// Support is what this machine offers.
type Support struct {
	// Landlock is the kernel's Landlock ABI version, 0 when unavailable.
	Landlock int
	// LandlockErr says why Landlock is unavailable.
	LandlockErr error
	// Namespaces reports whether unprivileged user namespaces work here,
	// with mount, PID and network namespaces inside them.
	Namespaces bool
	// NamespacesErr says why namespaces are unavailable.
	NamespacesErr error
	// Cgroup is the cgroup v2 directory beneath which a command's own
	// cgroup can be made; empty when none can.
	Cgroup string
	// CgroupErr says why no cgroup can be made.
	CgroupErr error
	// Limits says where a command's process and memory caps can be set
	// (its cgroup's controllers); LimitsErr why not everywhere.
	Limits    launcher.LimitSupport
	LimitsErr error
	// SupervisorErr says why the egress proxy cannot hold a command with
	// Landlock alone (supervise_linux.go); nil when it can.
	SupervisorErr error
}

// Pattern is a path pattern of a permission rule: a directory and a
// gitignore-style glob beneath it ("**" for everything in it).
type Pattern struct {
	Base, Glob string
}

// Options configure the sandbox ([New]). Paths are absolute.
type Options struct {
	Mode Mode
	// Network is what a command's network is; empty means [NetProxy].
	Network NetMode
	// AllowedDomains and DeniedDomains are the egress proxy's domain
	// rules (sandbox.network.allowedDomains and deniedDomains, and the
	// WebFetch(domain:…) allow and deny rules).
	AllowedDomains, DeniedDomains []string
	// Home is the user's home directory (the build caches).
	Home string
	// BuildCaches are the user's build caches (caches.go): never
	// writable by a command; each one agent-mcp knows a variable for
	// (those of [DefaultBuildCaches]) has a stand-in per workspace that
	// the variable points a command's tool at. nil means
	// [DefaultBuildCaches].
	BuildCaches []string
	// CacheRoot is where the per-workspace stand-ins are kept; empty
	// means $XDG_CACHE_HOME/agent-mcp/build-caches (Home/.cache/...).
	CacheRoot string
	// Writable are further writable directories (Edit allow rules').
	Writable []string
	// ReadOnly are paths kept read-only inside the writable roots (Edit
	// deny rules').
	ReadOnly []Pattern
	// ReadDeny are paths a command cannot read (Read deny rules').
	ReadDeny []Pattern
	// ReadAllow are the Read allow rules' paths: a credential path one of
	// them names is not masked (credentials.go).
	ReadAllow []Pattern
	// Credentials lists the credential paths of a command whose session
	// keeps its state in stateDir, whether or not they exist: the
	// namespaces layer masks those that exist (credentials.go). The
	// caller keeps the one list (the permission check refuses reading
	// the same paths); nil means none.
	Credentials func(stateDir string) []string
	// Protected lists the paths a command may never create or change in
	// the writable roots and the home directory (a .git's hooks and
	// config, .mcp.json, .envrc, ...; pinned.go), whether or not they
	// exist; nil means none. The sandbox adds the parts of the
	// repositories it finds.
	Protected func(roots []string) []string
	// ProtectedNames are the protected names (permissions.ProtectedNames:
	// the lists and the one predicate the Write and Edit tools judge by).
	// Where the kernel allows, a supervisor in each command's launcher
	// refuses the calls that would create or change one at any depth of a
	// writable root (launcher/fsguard_linux.go); empty: none.
	ProtectedNames protect.Names
	// Hosts maps names to addresses ahead of DNS in the egress proxy
	// ([HostsEnv], read by [ParseHosts]).
	Hosts map[string]netip.Addr
	// AllowedLayers, when not nil, limits the layers the sandbox may use
	// to those it names ("namespaces", "landlock", "cgroup"; an empty list
	// or "none" for none): [LayersEnv]. nil: every layer the machine
	// offers.
	AllowedLayers []string
	// Limits caps each command's processes and memory where it runs in
	// a cgroup of its own.
	Limits Limits
	// Launcher is the agent-mcp binary; default /proc/self/exe (the
	// running one).
	Launcher string
	// AllowUserNamespaces lets a command make user namespaces of its
	// own; refused by default where the namespaces layer is in use.
	AllowUserNamespaces bool
	// HomeReadable, when not nil, makes Home private: a command reads
	// nothing beneath it but these paths (the toolchains' places and
	// what the settings allow; the caller's list), its working
	// directories, writable paths and state directory there (home.go).
	// nil leaves the home readable.
	HomeReadable []string
	// Pinned are further paths a command may never create or change
	// (agent-mcp's user configuration with its trust store, Claude
	// Code's), whatever the writable roots are.
	Pinned []string
	// CredentialEnvs and CredentialFiles are sandbox.credentials' envVars
	// and files (masked.go): denied, or masked with a sentinel the
	// egress proxy swaps for the value toward the entry's hosts.
	CredentialEnvs  []CredentialEnv
	CredentialFiles []CredentialFile
	// AllowPlaintextInject lets the proxy inject a masked value into a
	// plain http:// request (sandbox.credentials.allowPlaintextInject).
	AllowPlaintextInject bool
	// TLSTerminate terminates TLS toward every host, not only those a
	// masked value is injected toward, so that a sentinel sent anywhere
	// is refused (sandbox.network.tlsTerminate).
	TLSTerminate bool
	// TLSCA is the CA the proxy terminates TLS with (tlsTerminate's
	// caCertPath and caKeyPath); nil makes one per session.
	TLSCA *egress.CA
	// UpstreamRoots verify the hosts the proxy reaches after terminating
	// TLS; nil means the system's roots ([RootsEnv] adds some).
	UpstreamRoots *x509.CertPool
}

// Sandbox starts commands confined. A nil *Sandbox runs them unconfined.
type Sandbox struct {
	opts Options
	// probed is closed once the namespaces and cgroup probe has set
	// layers and support; nil when they were set from the start.
	probed chan struct{}
	// probeStart starts the probe once ([Sandbox.StartProbe]).
	probeStart sync.Once
	// landlock is the Landlock ABI known when New returned (support is
	// rewritten by the probe).
	landlock int
	// supervisorErr is support.SupervisorErr as New found it: whether the
	// egress proxy can hold with Landlock alone is known before the probe.
	supervisorErr error
	// fileGuardErr says why the supervisor of creating calls cannot run
	// here (fileguard.go); nil when it can.
	fileGuardErr error
	layers       Layers
	support      Support
	caches       *buildCaches
	// cgroups numbers the commands' cgroups.
	cgroups atomic.Uint64
	// guard moves aside protected names a command created (pinned.go).
	guard absentGuard
	// repos are the .git entries every scan so far found (git.go).
	repos repoMemory
	// proxy is the egress proxy's listener with Landlock alone, made on
	// first use (supervise_linux.go).
	proxyOnce sync.Once
	proxy     *supervisedProxy
	proxyErr  error
	// homePath is the private home resolved and homeReadable the
	// readable paths under both spellings, set once (home.go).
	homeOnce     sync.Once
	beside       homeBeside // Landlock alone: the walk beside the home
	homePath     string
	homeReadable []string
	// creds are the sessions' masked credentials (masked.go).
	creds credStore
}

// New checks what the machine offers and picks the layers for opts.Mode:
// required fails without Landlock; auto takes what there is; off takes
// nothing (and returns a nil Sandbox). Landlock is checked before New
// returns, the namespaces and a cgroup by a probe in the background (it
// starts the binary in new namespaces, tens of milliseconds): it starts at
// [Sandbox.StartProbe] or, at the latest, when a method that depends on
// the layers ([Sandbox.Layers], [Sandbox.Confines], [Sandbox.Describe],
// [Sandbox.Command], ...) is first called, and those methods wait for it.
func New(opts Options) (*Sandbox, error) {
	if opts.Mode == "" {
		opts.Mode = ModeAuto
	}
	if opts.Mode == ModeOff {
		return nil, nil
	}
	if opts.Launcher == "" {
		opts.Launcher = "/proc/self/exe"
	}
	// Landlock is known at once; the namespaces and cgroup probe starts
	// child processes, so it waits for the caller's StartProbe (an MCP
	// server answers initialize first: on two cores the probe's children
	// would take a core from that answer) or the first method that needs
	// the layers.
	s := &Sandbox{opts: opts, probed: make(chan struct{}), support: probeLandlock(opts.AllowedLayers)}
	s.guard.memory = &s.repos
	if opts.Mode == ModeRequired && s.support.Landlock == 0 {
		s.probeStart.Do(s.probe)
		return nil, fmt.Errorf("--sandbox required: Landlock is not available (%v); use --sandbox auto to run with what this machine offers (%s), or --sandbox off", s.support.LandlockErr, s.layers)
	}
	s.landlock, s.supervisorErr = s.support.Landlock, s.support.SupervisorErr
	s.fileGuardErr = launcher.FileGuardSupport()
	s.caches = newBuildCaches(opts)
	// A cache of the user's that does not exist yet is made now, so that
	// a command cannot make one (and fill it) where a working directory
	// holds it: the namespaces layer binds an existing one read-only.
	for _, c := range s.caches.user {
		_ = os.MkdirAll(c, 0o755)
	}
	return s, nil
}

// StartProbe starts the namespaces and cgroup probe in the background
// unless it has started already; it does not wait for it. A nil Sandbox,
// or one whose layers were known from the start, has nothing to probe.
func (s *Sandbox) StartProbe() {
	if s == nil || s.probed == nil {
		return
	}
	s.probeStart.Do(func() { go s.probe() })
}

// probe finishes what [New] started: it tries the namespaces and a cgroup,
// picks the layers and then closes s.probed.
func (s *Sandbox) probe() {
	defer close(s.probed)
	s.caches.prune()
	sup := s.support
	probeProcesses(&sup, s.opts.Launcher, s.opts.AllowedLayers)
	s.support = sup
	s.layers = Layers{Namespaces: sup.Namespaces, Landlock: sup.Landlock}
	s.layers.Cgroup = s.layers.Any() && sup.Cgroup != ""
	if s.layers.Cgroup {
		launcher.RemoveStaleCgroups(sup.Cgroup)
		removeStaleLimits(sup.Limits)
	}
}

// ready starts the probe if it has not started and waits until the
// layers are known.
func (s *Sandbox) ready() {
	if s.probed != nil {
		s.StartProbe()
		<-s.probed
	}
}

// allowedLayers applies [Options.AllowedLayers] to what the machine
// supports.
func allowedLayers(sup *Support, want []string) {
	if want == nil {
		return
	}
	if !slices.Contains(want, "namespaces") && sup.Namespaces {
		sup.Namespaces, sup.NamespacesErr = false, fmt.Errorf("turned off by %s", LayersEnv)
	}
	if !slices.Contains(want, "landlock") && sup.Landlock > 0 {
		sup.Landlock, sup.LandlockErr = 0, fmt.Errorf("turned off by %s", LayersEnv)
	}
	if !slices.Contains(want, "cgroup") && sup.Cgroup != "" {
		sup.Cgroup, sup.CgroupErr = "", fmt.Errorf("turned off by %s", LayersEnv)
	}
}

// Layers returns the layers commands run under, once the probe has
// finished (starting it if need be); none for a nil Sandbox.
func (s *Sandbox) Layers() Layers {
	if s == nil {
		return Layers{}
	}
	s.ready()
	return s.layers
}

// Support returns what the machine offers.
func (s *Sandbox) Support() Support {
	if s == nil {
		return Support{}
	}
	s.ready()
	return s.support
}

// Confines reports whether commands run confined: a layer is in use. A
// command its [Spec] marks Excluded runs outside the sandbox whatever
// this says: the caller decides that.
func (s *Sandbox) Confines() bool {
	return s != nil && s.Layers().Any()
}

// HoldsPaths reports whether the kernel keeps protected and Edit-denied
// paths read-only and masks Read-denied ones: the namespaces layer does;
// Landlock alone cannot take back part of a writable root.
func (s *Sandbox) HoldsPaths() bool { return s != nil && s.Layers().Namespaces }

// Describe is the one line `serve` logs at start.
func (s *Sandbox) Describe() string {
	if s == nil {
		return "sandbox: off (--sandbox off or sandbox.enabled false): commands run unconfined"
	}
	s.ready()
	if !s.layers.Any() {
		return fmt.Sprintf("sandbox: no layer available (namespaces: %v; landlock: %v): commands run unconfined", s.support.NamespacesErr, s.support.LandlockErr)
	}
	net := "on"
	switch s.net() {
	case NetOff:
		net = "off"
	case NetProxy:
		net = "through the egress proxy"
	}
	if note := s.NetworkNote(); note != "" {
		net += " (" + note + ")"
	}
	return fmt.Sprintf("sandbox: %s, network %s, processes held by %s, %s", s.layers, net, s.layers.processes(), s.describeLimits())
}

// DefaultBuildCaches are the user's build caches agent-mcp knows a
// variable for (caches.go): Go's build and module caches, npm's, pip's
// and Cargo's registry and git checkouts. $GOCACHE, $GOMODCACHE, $GOPATH
// (from the environment or go's env file), $XDG_CACHE_HOME,
// $npm_config_cache, $PIP_CACHE_DIR and $CARGO_HOME are honoured.
func DefaultBuildCaches(home string) []string {
	var out []string
	for _, k := range knownCaches(home, goEnvReader()) {
		out = append(out, k.dir)
	}
	return out
}

// Spec is one command to start.
type Spec struct {
	// Shell runs Script with -c.
	Shell, Script string
	// Excluded runs the command outside the sandbox, as the plain shell:
	// the caller found that it runs only programs the user excluded
	// (sandbox.excludedCommands).
	Excluded bool
	// Dir is where it starts.
	Dir string
	// WorkDirs are the session's working directories (writable).
	WorkDirs []string
	// StateDir is the session's state directory. Only the private
	// temporary directory made in it (StateDir/tmp) is writable: the
	// server writes the rest (task output, saved results), and a command
	// must not plant links there.
	StateDir string
	// Files are inherited by the shell as descriptors 3, 4, ... (e.g.
	// where it reports its final directory).
	Files []*os.File
	// Egress serves the command's connections through the egress proxy
	// when the network mode is [NetProxy]; nil refuses every one.
	Egress *egress.Handler
	// ReadOnly keeps the working directories (and the configured
	// writable paths) read-only: only the private temporary directory
	// and the build caches' stand-in are writable. A process that lasts
	// the session and only reads the tree (a language server) runs so:
	// it can create nothing there, so the guard of protected names does
	// not watch on its account, and what the user makes meanwhile stays
	// the user's.
	ReadOnly bool
}

// Launch is a command being started: the process to start (with the
// environment variables to add), and how to wait for the shell's status.
type Launch struct {
	// Cmd is what the caller starts, after setting its directory,
	// environment (plus Env), process group and standard streams. A
	// caller that sets SysProcAttr must keep the fields it holds, and
	// ExtraFiles as they are.
	Cmd *exec.Cmd
	// Env are variables to add to the command's environment (TMPDIR,
	// the build caches' stand-ins, the egress proxy's, the sentinels of
	// masked credentials).
	Env []string
	// Unset are variables the command must not get from the caller's
	// environment (denied and masked credentials): see [Launch.Environ].
	Unset []string
	// notes are said once, with what Refused reports.
	notes []string

	status, statusW *os.File // the shell's exit status, from the sandbox's init
	// server is this process's end of the socket pair init watches
	// (serverR init's end): held, never written, until init is gone, so
	// that init reads end of file only when this process has died.
	server, serverR *os.File
	cgroups         []string // the command's cgroups (v2, then v1 ones), removed once init is gone
	// egressInit and egressServer are the ends of the socket pair init
	// hands the proxy's connections over (network.go); egress serves
	// them.
	egressInit, egressServer *os.File
	egress                   *egress.Handler
	relay                    *relay
	// supervised is the proxy's listener when a supervisor holds the
	// command (Landlock alone) instead of a relay.
	supervised *supervisedProxy
	// fileGuard is set when the launcher's supervisor of creating calls
	// holds the command (fileguard.go): with supervised, it forwards the
	// socket calls to the server.
	fileGuard bool
	guard     *absentGuard
	// alone is set by Wait when init said that no other process of the
	// command was left as the shell ended.
	alone bool
}

// Refused says what the sandbox moved aside since it last said: protected
// names a sandboxed command created (pinned.go).
func (l *Launch) Refused() []string {
	notes := l.notes
	l.notes = nil
	if l.guard == nil {
		return notes
	}
	return append(notes, l.guard.report()...)
}

// Environ is the command's environment: base (the caller's choice of
// variables) without [Launch.Unset], then [Launch.Env].
func (l *Launch) Environ(base []string) []string {
	out := make([]string, 0, len(base)+len(l.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(l.Unset, k) {
			out = append(out, kv)
		}
	}
	return append(out, l.Env...)
}

// Command returns how to run spec confined. A nil Sandbox, one without
// layers, or an excluded command gives the plain shell.
func (s *Sandbox) Command(spec Spec, grace time.Duration) (*Launch, error) {
	if spec.Excluded || !s.Confines() {
		return s.plainCommand(spec), nil
	}
	return s.confinedCommand(spec, grace)
}

// plainCommand is the shell outside the sandbox.
func (s *Sandbox) plainCommand(spec Spec) *Launch {
	cmd := exec.Command(spec.Shell, "-c", spec.Script)
	cmd.ExtraFiles = spec.Files
	if s == nil || !s.Layers().Any() {
		return &Launch{Cmd: cmd}
	}
	// An excluded command runs outside the sandbox: it must not find
	// what a sandboxed command still running planted (a hook git would
	// run).
	s.guard.sweepIfRunning()
	return &Launch{Cmd: cmd, guard: &s.guard}
}

// confinedCommand is the sandbox's init for spec: the plan's files and
// paths, its network and its cgroups, then the launch with the guard of
// protected names and the egress proxy's socket.
func (s *Sandbox) confinedCommand(spec Spec, grace time.Duration) (*Launch, error) {
	w, err := s.workspaceOf(spec)
	if err != nil {
		return nil, err
	}
	creds, err := s.credentials(spec.StateDir)
	if err != nil {
		return nil, err
	}
	p := launcher.Plan{
		Shell: spec.Shell, Script: spec.Script, Dir: spec.Dir,
		UID: os.Getuid(), GID: os.Getgid(),
		Namespaces: s.layers.Namespaces, Landlock: s.layers.Landlock > 0,
		NetworkOff: s.net() == NetOff, Proxy: s.net() == NetProxy && s.layers.Namespaces,
		Supervised: s.net() == NetProxy && !s.layers.Namespaces,
		Writable:   w.writable, EmptyFile: w.empty, GraceMS: (grace / 2).Milliseconds(),
		ServerFD: launcher.ServerFD, ShellFiles: len(spec.Files), AllowUserNS: s.opts.AllowUserNamespaces,
	}
	if s.layers.Namespaces {
		p.ProcessLimit = s.limits().Processes
	}
	guarded, found, seen := s.planPaths(&p, spec.StateDir, w, creds)
	if !spec.ReadOnly {
		guarded = s.planGuard(&p, w, guarded)
	}
	s.planHome(&p, spec, w, creds)
	notes := s.planCredentials(&p, creds)
	proxy, err := s.planNetwork(&p, len(spec.Files))
	if err != nil {
		return nil, err
	}
	cgroups, err := s.planCgroups(&p)
	if err != nil {
		return nil, err
	}
	l, err := s.newLaunch(p, spec.Files, w, cgroups)
	if err != nil {
		return nil, err
	}
	l.fileGuard = p.Guard != nil
	if !spec.ReadOnly {
		s.guard.begin(guarded, w.writable, w.roots, found, seen)
		l.guard = &s.guard
	}
	if p.Proxy || p.Supervised {
		if err := l.withEgress(spec.Egress, proxy); err != nil {
			l.Started(err)
			return nil, fmt.Errorf("sandbox: egress socket: %w", err)
		}
	}
	l.withCredentials(creds, p.Proxy || p.Supervised, notes)
	return l, nil
}

// workspace is where a confined command may write: its private
// temporary directory, the build caches' stand-in (empty when there is
// none), the writable roots (its working directories and the configured
// writable paths, none when read-only) and every writable path that
// exists; empty is the file that stands in for a Read-denied one.
type workspace struct {
	tmp, empty, standIn string
	roots, writable     []string
}

// workspaceOf makes the command's private temporary directory, the empty
// file and the build caches' stand-in, and lists its writable paths.
func (s *Sandbox) workspaceOf(spec Spec) (workspace, error) {
	var w workspace
	var err error
	if w.tmp, err = privateTmp(spec.StateDir); err != nil {
		return w, err
	}
	if w.empty, err = emptyFile(spec.StateDir); err != nil {
		return w, err
	}
	ws := spec.Dir
	if len(spec.WorkDirs) > 0 {
		ws = spec.WorkDirs[0]
	}
	if w.standIn, err = s.caches.standIn(ws); err != nil {
		return w, err
	}
	var writable []string
	if !spec.ReadOnly {
		writable = append(slices.Clone(spec.WorkDirs), s.opts.Writable...)
	}
	w.roots = slices.Clone(writable)
	writable = append(writable, w.tmp)
	if w.standIn != "" {
		writable = append(writable, w.standIn)
	}
	w.writable = existing(writable)
	return w, nil
}

// planPaths sets what the plan keeps read-only inside the writable paths
// (the protected paths and the Edit-denied ones; outside them everything
// is read-only already), what it masks (Read-denied and credential paths,
// unix sockets without the network) and the ancestors it pins. It
// returns the protected paths inside the writable paths, for the guard,
// with the repositories the scan found and the directories it read.
func (s *Sandbox) planPaths(p *launcher.Plan, stateDir string, w workspace, creds *sessionCreds) (guarded []string, found repos, seen map[string]dirState) {
	seen = map[string]dirState{}
	pinned, found := s.pinnedPaths(w.roots, seen)
	ro := append(slices.Clone(pinned), expand(s.opts.ReadOnly)...)
	// The user's build caches, where a working directory holds them.
	ro = append(ro, s.caches.user...)
	for _, r := range existing(ro) {
		if within(r, w.writable) && !isGitDirEntry(r) {
			p.ReadOnly = append(p.ReadOnly, r)
		}
	}
	if w.standIn != "" && within(w.standIn, p.ReadOnly) {
		p.WritableAgain = append(p.WritableAgain, w.standIn)
	}
	for _, r := range pinned {
		if within(r, w.writable) {
			guarded = append(guarded, r)
		}
	}
	// Masks are mounts: only the namespaces layer has them, and the
	// credential list is long enough that looking at each path for a
	// command that cannot mask it costs (Landlock alone).
	if s.layers.Namespaces {
		p.Masked = existing(append(expand(s.opts.ReadDeny), s.credentialMasks(stateDir, creds)...))
		if s.net() != NetOn {
			p.Masked = append(p.Masked, unixSockets(w.writable)...)
		}
	}
	stateReadOnly(p, stateDir, w.tmp, w.roots)
	p.Pinned = ancestorsWithin(append(slices.Clone(p.ReadOnly), p.Masked...), w.writable)
	return guarded, found, seen
}

// planNetwork gives the plan the descriptor of the egress proxy's socket
// where its connections go through the proxy (after init's and the
// shell's files), and returns the supervisor's listener where Landlock
// alone holds the command.
func (s *Sandbox) planNetwork(p *launcher.Plan, shellFiles int) (*supervisedProxy, error) {
	var proxy *supervisedProxy
	if p.Supervised {
		var err error
		if proxy, err = s.supervisedProxy(); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if p.Proxy || p.Supervised {
		p.ProxyFD = launcher.ServerFD + 1 + shellFiles
	}
	if p.Proxy {
		// Plain TCP clients reach the ports of the host's loopback a rule
		// names: init listens on each inside the namespace (the proxy's
		// own port excepted: that one is reached through the proxy).
		for _, ap := range s.EgressRules().LoopbackPorts() {
			switch port := int(ap.Port()); {
			case port == launcher.ProxyPort:
			case ap.Addr().Is4():
				p.LoopbackV4 = append(p.LoopbackV4, port)
			default:
				p.LoopbackV6 = append(p.LoopbackV6, port)
			}
		}
	}
	return proxy, nil
}

// planCgroups makes the command's cgroup with its limits where cgroups
// are in use, and returns the cgroups made (v2, then v1 ones). Where none
// can be made now, the subreaper alone holds the command.
func (s *Sandbox) planCgroups(p *launcher.Plan) ([]string, error) {
	if !s.layers.Cgroup {
		return nil, nil
	}
	var cgroups []string
	n := s.cgroups.Add(1)
	p.Cgroup, _ = launcher.NewCgroup(s.support.Cgroup, n)
	if p.Cgroup == "" {
		return nil, nil
	}
	cgroups = append(cgroups, p.Cgroup)
	joins, err := launcher.SetLimits(s.limitSupport(), p.Cgroup, n, s.limits())
	cgroups = append(cgroups, joins...)
	if err != nil {
		removeCgroups(cgroups)
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p.JoinCgroups = joins
	return cgroups, nil
}

// newLaunch is init's command for plan p, with the status pipe and the
// server's socket pair; its environment adds the private temporary
// directory and the build caches' stand-ins. The cgroups are removed if
// it cannot be made.
func (s *Sandbox) newLaunch(p launcher.Plan, files []*os.File, w workspace, cgroups []string) (*Launch, error) {
	arg, err := json.Marshal(p)
	if err != nil {
		removeCgroups(cgroups)
		return nil, err
	}
	r, wr, err := os.Pipe()
	if err != nil {
		removeCgroups(cgroups)
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	sr, sw, err := serverPair()
	if err != nil {
		r.Close()
		wr.Close()
		removeCgroups(cgroups)
		return nil, fmt.Errorf("sandbox: server socket: %w", err)
	}
	cmd := launcher.Command(s.opts.Launcher, string(arg), p)
	// fd 3 and launcher.ServerFD (4) in init, then the shell's files,
	// then the egress relay's socket (Plan.ProxyFD).
	cmd.ExtraFiles = append([]*os.File{wr, sr}, files...)
	env := append([]string{"TMPDIR=" + w.tmp}, s.caches.env(w.standIn)...)
	return &Launch{Cmd: cmd, Env: env, status: r, statusW: wr,
		server: sw, serverR: sr, cgroups: cgroups}, nil
}

// withEgress adds the socket pair init hands the proxy's connections
// over (init's end as Plan.ProxyFD) and the proxy's variables; h serves
// the connections (nil refuses every one), through the supervisor's
// listener proxy where Landlock alone holds the command.
func (l *Launch) withEgress(h *egress.Handler, proxy *supervisedProxy) error {
	ei, es, err := egressPair()
	if err != nil {
		return err
	}
	l.Cmd.ExtraFiles = append(l.Cmd.ExtraFiles, ei)
	l.egressInit, l.egressServer, l.egress = ei, es, h
	if l.egress == nil {
		l.egress = &egress.Handler{}
	}
	port := launcher.ProxyPort
	if proxy != nil {
		l.supervised, port = proxy, proxy.port
	}
	l.Env = append(l.Env, proxyEnv(port)...)
	return nil
}

// serverPair is the connected pair of unix sockets whose first end init
// watches and whose second only the server holds. Not a pipe: the
// command could open init's read end of a pipe for writing through
// /proc/PID/fd and so keep init from ever reading end of file; a socket
// cannot be opened there.
func serverPair() (initEnd, serverEnd *os.File, err error) {
	return socketPair(syscall.SOCK_STREAM, "init", "server")
}

// SetupFailed is the status a confined command reports when its sandbox
// could not be set up, so it never ran.
const SetupFailed = launcher.SetupFailed

// Confined reports whether Cmd is the sandbox's init rather than the
// plain shell: the shell is then init's child, in a session init starts.
func (l *Launch) Confined() bool { return l.status != nil }

// Started is called once Cmd.Start has returned err.
func (l *Launch) Started(err error) {
	if l.statusW != nil {
		l.statusW.Close()
	}
	if l.serverR != nil {
		l.serverR.Close()
	}
	if err != nil && l.status != nil {
		l.status.Close()
	}
	if err != nil && l.server != nil {
		l.server.Close()
	}
	if err != nil {
		removeCgroups(l.cgroups)
	}
	if err != nil && l.guard != nil {
		l.guard.sweep(true)
	}
	if l.egressInit != nil {
		l.egressInit.Close()
		if err != nil {
			l.egressServer.Close()
		} else if l.supervised != nil {
			go supervise(l.egressServer, l.supervised, l.egress, l.fileGuard)
		} else if r, rerr := newRelay(l.egressServer, l.egress); rerr == nil {
			l.relay = r
			go r.serve()
		}
	}
}

// Wait waits for the shell and returns its exit status (128+N after
// signal N). A confined shell's status comes from the sandbox's init as
// soon as the shell ends; init itself may live on with processes the
// command left running (they stay in its process group) and is reaped in
// the background.
func (l *Launch) Wait() int {
	if l.status == nil {
		err := l.Cmd.Wait()
		return exitStatus(l.Cmd.ProcessState, err)
	}
	// The guard counts the command as running until nothing of it is
	// left to create a protected name: until init is gone, or, sooner,
	// until init says the shell ended alone (init itself may take a
	// while longer to end, its namespaces coming down, and the next
	// command's start would find this one still running).
	var ended sync.Once
	endGuard := func() { ended.Do(func() { l.guard.sweep(true) }) }
	initDone := make(chan int, 1)
	go func() {
		err := l.Cmd.Wait()
		code := exitStatus(l.Cmd.ProcessState, err)
		l.server.Close()
		// init is gone, and whatever it left (it was killed) with it.
		removeCgroups(l.cgroups)
		endGuard()
		initDone <- code
	}()
	defer l.status.Close()
	line, err := bufio.NewReader(l.status).ReadString('\n')
	fields := strings.Fields(line)
	if len(fields) > 0 && err == nil {
		if code, perr := strconv.Atoi(fields[0]); perr == nil {
			l.alone = len(fields) == 2 && fields[1] == launcher.StatusAlone
			if l.alone {
				endGuard()
			} else {
				l.guard.sweep(false)
			}
			return code
		}
	}
	// init ended without reporting: it failed to set up, or was killed.
	return <-initDone
}

// Alone reports, once Wait has returned, whether the confined command
// left no process behind: its init said that none but the shell's was
// left as the shell ended, and none can start after that (init is
// every orphan's parent, and starts nothing itself). The caller then
// need not look for the command's processes (init itself may still be
// ending: a PID namespace's init ends after the kernel has taken its
// namespaces down). False outside the sandbox, and when init could not
// say.
func (l *Launch) Alone() bool { return l.alone }

// exitStatus is a process's exit status, 128+N for a death by signal N.
func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return -1
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// privateTmp makes the command's private temporary directory in the
// session's state directory: a directory of its own, never a link a
// command left under the name (binding it writable would follow it).
func privateTmp(stateDir string) (string, error) {
	tmp := filepath.Join(stateDir, "tmp")
	if st, err := os.Lstat(tmp); err == nil && !st.IsDir() {
		if err := os.Remove(tmp); err != nil {
			return "", fmt.Errorf("sandbox: private temporary directory: %w", err)
		}
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: private temporary directory: %w", err)
	}
	return tmp, nil
}

// stateReadOnly keeps the session's state directory read-only where it
// lies inside a writable root (the namespaces layer binds it read-only,
// then its private temporary directory writable again); elsewhere it is
// read-only already. Landlock alone cannot take it back: there the server
// opens what it makes there without following links.
func stateReadOnly(p *launcher.Plan, stateDir, tmp string, roots []string) {
	if stateDir == "" || !within(stateDir, roots) {
		return
	}
	p.ReadOnly = append(p.ReadOnly, filepath.Clean(stateDir))
	p.WritableAgain = append(p.WritableAgain, tmp)
}

// emptyFile makes the empty, read-only file that stands in for a
// Read-denied file, in the session's state directory (outside every
// writable root, or bound read-only where a root holds it, so that no
// command can swap it between this check and the mount). Whatever else
// lies under its name (a directory, a fifo, a link, a file with content)
// is removed first: a directory there made every mask, and so every
// command, fail.
func emptyFile(stateDir string) (string, error) {
	p := filepath.Join(stateDir, "sandbox-empty")
	good := func() bool {
		st, err := os.Lstat(p)
		return err == nil && st.Mode().IsRegular() && st.Size() == 0
	}
	if good() {
		return p, nil
	}
	if err := os.RemoveAll(p); err != nil {
		return "", fmt.Errorf("sandbox: empty file: %w", err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		if errors.Is(err, fs.ErrExist) && good() {
			return p, nil // another command's start made it
		}
		return "", fmt.Errorf("sandbox: empty file: %w", err)
	}
	f.Close()
	return p, nil
}

// expandLimit bounds the directory entries one pattern's expansion visits.
const expandLimit = 50_000

// expand lists the existing paths matching patterns: the pattern's
// directory itself for "**", else the matches of the glob beneath it.
func expand(pats []Pattern) []string {
	var out []string
	for _, p := range pats {
		base, glob := p.Base, p.Glob
		// Literal leading components join the base.
		parts := strings.Split(glob, "/")
		i := 0
		for ; i < len(parts) && !strings.ContainsAny(parts[i], `*?[\{`); i++ {
		}
		base = filepath.Join(base, filepath.Join(parts[:i]...))
		rest := strings.Join(parts[i:], "/")
		if rest == "" || rest == "**" {
			out = append(out, base)
			continue
		}
		visited := 0
		_ = doublestar.GlobWalk(os.DirFS(base), rest, func(path string, d fs.DirEntry) error {
			visited++
			if visited > expandLimit {
				return fs.SkipAll
			}
			out = append(out, filepath.Join(base, path))
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}, doublestar.WithNoFollow())
	}
	return out
}

// existing keeps the paths that exist, cleaned and without repeats.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if _, err := os.Lstat(p); err == nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// within reports whether p is one of roots or beneath one.
func within(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

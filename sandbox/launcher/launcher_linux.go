package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The launcher runs from this package's initialisation, before main: Go
// initialises a binary's packages one at a time, each as soon as its own
// imports are, the first by import path when several are ready (the
// language's rule since Go 1.21). This package's imports are ready before
// those of the heavy packages of the rest of agent-mcp (the chat UI's
// syntax highlighting and markdown rendering take some 15 ms and touch
// much of the binary) and its path sorts before theirs, so a launcher
// skips them and starts like a small program. e2e's
// TestSandbox_launcher_skips_the_application_init checks it.
func init() {
	if len(os.Args) > 1 && os.Args[1] == HiddenCommand {
		os.Exit(Main(os.Args[2:]))
	}
}

// Main runs the hidden launcher: args are what follows [HiddenCommand].
// It returns the process exit status.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "agent-mcp sandbox launcher: missing stage")
		return 2
	}
	if args[0] == "probe" {
		if err := probeChild(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	if args[0] == GoCacheStage {
		return goCacheMain(args[1:])
	}
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "agent-mcp sandbox launcher: bad arguments")
		return 2
	}
	var p Plan
	if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "agent-mcp sandbox launcher: plan: %v\n", err)
		return 2
	}
	if args[0] == "init" {
		return initMain(p)
	}
	fmt.Fprintf(os.Stderr, "agent-mcp sandbox launcher: unknown stage %q\n", args[0])
	return 2
}

// Command is the sandbox's init for plan p (its JSON is arg), in new
// namespaces when the plan says so; launcher is the agent-mcp binary.
func Command(launcher, arg string, p Plan) *exec.Cmd {
	cmd := exec.Command(launcher, HiddenCommand, "init", arg)
	if p.Namespaces {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  nsFlags(p.NetworkOff || p.Proxy),
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: p.UID, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: p.GID, Size: 1}},
		}
	}
	return cmd
}

func nsFlags(netOff bool) uintptr {
	f := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC)
	if netOff {
		f |= syscall.CLONE_NEWNET
	}
	return f
}

// initMain sets the sandbox up, runs the shell, reports its status on fd
// 3, and reaps every process of the command until none is left. SIGTERM,
// SIGINT and SIGHUP end them all. Each stage is a function of its own, in
// the order they run.
func initMain(p Plan) int {
	// init keeps to its main thread; the shell is started from a thread
	// of its own that ends once it has (startLockedDown).
	runtime.LockOSThread()
	dropTerminal()
	if err := Undumpable(); err != nil {
		return setupFailed("making the launcher undumpable: %v", err)
	}
	status := os.NewFile(3, "status")
	syscall.CloseOnExec(3)
	closeStrayFiles(p) // lockdown_linux.go
	server, ok := openServer(p)
	if !ok {
		// The server died before init got here: nothing is started.
		return SetupFailed
	}
	cg, err := openCgroup(p)
	if err != nil {
		return setupFailed("opening the command's cgroup: %v", err)
	}
	if p.Supervised {
		// The socket to the server is the shell thread's, to send the
		// filter's listener on (lockdown_linux.go); the shell gets none.
		syscall.CloseOnExec(p.ProxyFD)
	}
	joins, err := openJoins(p.JoinCgroups)
	if err != nil {
		return setupFailed("%v", err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return setupFailed("opening %s: %v", os.DevNull, err)
	}
	if err := confine(p); err != nil {
		return setupFailed("%v", err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	gone := watchServer(server)
	cmd, err := startShell(p, cg, joins)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent-mcp sandbox: starting %s: %v\n", p.Shell, err)
		fmt.Fprintln(status, 127)
		status.Close()
		return 127
	}
	releaseOutput(null)
	report := statusReporter(status)
	reaped := reapAll(cmd.Process.Pid, report)
	return endAll(p, cg, sigs, gone, reaped, report)
}

// setupFailed says why the sandbox could not be set up and returns
// [SetupFailed].
func setupFailed(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "agent-mcp sandbox: "+format+"\n", a...)
	return SetupFailed
}

// openServer takes init's end of the socket pair the server holds
// (p.ServerFD; nil when the plan has none); ok is false when the server
// is gone already.
func openServer(p Plan) (server *os.File, ok bool) {
	if p.ServerFD <= 0 {
		return nil, true
	}
	syscall.CloseOnExec(p.ServerFD)
	server = os.NewFile(uintptr(p.ServerFD), "server")
	return server, !serverGone(p.ServerFD)
}

// openCgroup opens the command's cgroups before the mounts turn read-only
// and Landlock forbids writing beneath /sys/fs/cgroup: the v2 one's
// directory to start the shell in and cgroup.kill to end it (the v1
// ones' tasks to join are opened by openJoins, limits_linux.go).
func openCgroup(p Plan) (*cgroup, error) {
	cg := &cgroup{dir: p.Cgroup, fd: -1}
	if p.Cgroup == "" {
		return cg, nil
	}
	fd, err := unix.Open(p.Cgroup, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	cg.fd = fd
	// With namespaces the PID namespace ends the command, and a file
	// open for writing would keep its mount from turning read-only.
	if f, err := os.OpenFile(filepath.Join(p.Cgroup, "cgroup.kill"), os.O_WRONLY, 0); err == nil && !p.Namespaces {
		cg.kill = f // absent before Linux 5.14: the processes are killed one by one
	} else if err == nil {
		f.Close()
	}
	return cg, nil
}

// confine applies the plan's layers to init (and so to what it starts):
// the mounts and the private loopback in the namespaces, or else a
// subreaper; no_new_privs; Landlock; with the network off and no network
// namespace, the socket filter; and then the egress relay in the
// namespaces.
func confine(p Plan) error {
	if p.Namespaces {
		if err := capProcesses(p); err != nil {
			return err
		}
		if err := setupMounts(p); err != nil {
			return err
		}
		if err := refuseUserNamespaces(p); err != nil {
			return err
		}
		if p.NetworkOff || p.Proxy {
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("bringing up the private loopback: %w", err)
			}
		}
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a subreaper: %w", err)
	}
	if err := llsys.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if p.Landlock {
		if err := restrictLandlock(p); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if p.NetworkOff && !p.Namespaces {
		// No network namespace: a seccomp filter refuses every internet
		// socket, TCP too. Landlock refuses TCP connect and bind (ABI
		// 4+), but not listen on an unbound socket, which binds it to a
		// port of every address that the network can connect to, nor a
		// send with MSG_FASTOPEN, which connects.
		if err := restrictSockets(); err != nil {
			return fmt.Errorf("refusing sockets: %w", err)
		}
	}
	if p.Proxy && p.Namespaces {
		// Last: the relay's goroutines block in accept and recvmsg, each
		// on a thread of its own, made here from a thread already
		// confined, and the system calls above that reach every thread
		// of init (no_new_privs, Landlock) need not interrupt them (on
		// a loaded machine each such thread waited its turn to run:
		// 2 to 3 ms a command).
		if err := startRelay(p.ProxyFD, p); err != nil {
			return err
		}
	}
	return nil
}

// watchServer returns a channel closed when the server is gone: its
// death ends the command as SIGTERM does. No signal says it reliably: a
// parent-death signal (PR_SET_PDEATHSIG) comes when the server's thread
// that started init exits, not the server, and in a PID namespace init
// cannot tell by getppid whether the server died before the signal was
// set. The socket's end of file comes with the server's last descriptor,
// whenever that is. Without a server the channel is never closed.
func watchServer(server *os.File) chan struct{} {
	gone := make(chan struct{})
	if server != nil {
		go func() {
			var b [1]byte
			for {
				if _, err := server.Read(b[:]); err != nil {
					close(gone)
					return
				}
			}
		}()
	}
	return gone
}

// startShell starts the shell, locked down (startLockedDown), in the
// command's cgroup where it has one; where clone3 into a cgroup fails
// (before Linux 5.7) the subreaper alone holds it, and cg.dir is cleared.
func startShell(p Plan, cg *cgroup, joins []*os.File) (*exec.Cmd, error) {
	cmd := shellCommand(p)
	err := errors.New("no cgroup")
	if cg.fd >= 0 {
		// Added to the attributes shellCommand set, not in their place:
		// the command's user namespace must not be lost.
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cg.fd
		if err = startLockedDown(cmd, p, joins); err != nil {
			cmd = cloneCmd(cmd)
			cg.dir = ""
		}
	}
	if err != nil {
		err = startLockedDown(cmd, p, joins)
	}
	return cmd, err
}

// shellCommand is the shell as the plan runs it: its script, directory,
// standard streams and files, in a nested user namespace where the plan
// has one, and leading a session of its own on a pseudo-terminal.
func shellCommand(p Plan) *exec.Cmd {
	cmd := exec.Command(p.Shell, "-c", p.Script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Dir = p.Dir
	cmd.ExtraFiles = shellFiles(p)
	if nestedUserNS(p) {
		// The command runs as the user it was started by, in a user
		// namespace nested in the one that set the sandbox up: it holds
		// no capability over the mounts. (Root's command stays root in
		// the launcher's: it gives up every capability there instead, see
		// lockdown_linux.go, where a nested namespace would give it all.)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: p.UID, HostID: 0, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: p.GID, HostID: 0, Size: 1}},
		}
	}
	if _, terr := unix.IoctlGetTermios(0, unix.TCGETS); terr == nil {
		// A background task's pseudo-terminal: the shell leads a session
		// of its own with it as the controlling terminal, so a Ctrl-C
		// typed into it (TaskInput) interrupts the command as at a
		// terminal. The terminal is the task's own, never the user's.
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	}
	return cmd
}

// releaseOutput puts null in place of init's standard streams once the
// shell has started: the shell and what it starts hold the command's
// output and terminal, and the server's read of the output ends as soon
// as they have all let it go, not when init, the last, has ended (a PID
// namespace's init ends after the kernel has taken its namespaces down).
// Nothing init does after the start writes there.
func releaseOutput(null *os.File) {
	for fd := range 3 {
		_ = unix.Dup3(int(null.Fd()), fd, 0)
	}
	null.Close()
}

// statusReporter returns the function that writes the shell's status to
// status once, whoever calls it first: the exit status, followed by
// [StatusAlone] when no other process of the command was left as the
// shell ended.
func statusReporter(status *os.File) func(code int, alone bool) {
	var once sync.Once
	return func(code int, alone bool) {
		once.Do(func() {
			if alone {
				fmt.Fprintln(status, code, StatusAlone)
			} else {
				fmt.Fprintln(status, code)
			}
			status.Close()
		})
	}
}

// reapAll reaps every child init has until none is left, reporting the
// shell's status (128+N after signal N) as it ends, and whether it was
// the last; the channel it returns is closed when no child is left.
func reapAll(shell int, report func(code int, alone bool)) chan struct{} {
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return // no child left
			}
			if pid == shell {
				code := ws.ExitStatus()
				if ws.Signaled() {
					code = 128 + int(ws.Signal())
				}
				report(code, reapEnded())
			}
		}
	}()
	return reaped
}

// reapEnded reaps the children that have ended and reports whether none
// is left. A process of the command is init's child, or becomes one as
// its parent ends (init is the PID namespace's init, or else the
// command's subreaper), before that parent can be reaped: when the
// shell has been reaped and init has no child left, no process of the
// command is left, and none can start (init starts nothing more).
func reapEnded() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			return true
		case err != nil || pid == 0:
			return false // a child is still running
		}
	}
}

// endAll waits until every process of the command is reaped, passing on
// the signals init gets and ending the command when the server is gone:
// what did not end on SIGTERM after the plan's grace is killed.
func endAll(p Plan, cg *cgroup, sigs chan os.Signal, gone, reaped chan struct{}, report func(int, bool)) int {
	grace := time.Duration(p.GraceMS) * time.Millisecond
	var killTimer <-chan time.Time
	for {
		select {
		case <-reaped:
			report(128+int(syscall.SIGKILL), true)
			return 0
		case s := <-sigs:
			signalAll(p.Namespaces, cg, s.(syscall.Signal))
			if killTimer == nil {
				killTimer = time.After(grace)
			}
		case <-gone:
			gone = nil
			signalAll(p.Namespaces, cg, syscall.SIGTERM)
			if killTimer == nil {
				killTimer = time.After(grace)
			}
		case <-killTimer:
			// What did not end on SIGTERM is killed, again and again
			// until nothing is left (a process may fork meanwhile).
			signalAll(p.Namespaces, cg, syscall.SIGKILL)
			killTimer = time.After(50 * time.Millisecond)
		}
	}
}

// serverGone reports whether the server's end of the socket pair whose
// other end init reads as fd is closed: the server is gone.
func serverGone(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
	}
}

// cgroup is the command's cgroup as init holds it; dir is empty when the
// command is not in one.
type cgroup struct {
	dir  string
	fd   int
	kill *os.File
}

// cloneCmd is an unstarted copy of cmd not started in a cgroup, for a
// retry after a failed Start.
func cloneCmd(cmd *exec.Cmd) *exec.Cmd {
	c := exec.Command(cmd.Path, cmd.Args[1:]...)
	c.Stdin, c.Stdout, c.Stderr, c.Dir, c.Env, c.ExtraFiles = cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Dir, cmd.Env, cmd.ExtraFiles
	if cmd.SysProcAttr != nil {
		attr := *cmd.SysProcAttr
		attr.UseCgroupFD, attr.CgroupFD = false, 0
		c.SysProcAttr = &attr
	}
	return c
}

// signalAll sends sig to every process of the command: in a PID namespace
// everything but init itself; else everything in the command's cgroup, and
// init's whole subtree (orphans come to init, the subreaper).
func signalAll(ns bool, cg *cgroup, sig syscall.Signal) {
	if ns {
		_ = unix.Kill(-1, sig)
		if sig == syscall.SIGTERM {
			_ = unix.Kill(-1, syscall.SIGCONT)
		}
		return
	}
	if cg.dir != "" {
		if sig == syscall.SIGKILL {
			killCgroup(cg.dir, cg.kill)
		} else {
			signalCgroup(cg.dir, sig)
		}
	}
	for _, pid := range descendants(os.Getpid()) {
		_ = unix.Kill(pid, sig)
		if sig == syscall.SIGTERM {
			_ = unix.Kill(pid, syscall.SIGCONT)
		}
	}
}

// descendants lists the processes beneath root, from /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// setupMounts makes the filesystem view: everything read-only, the
// writable roots writable, protected paths inside them read-only again,
// Read-denied paths masked, a private /dev/shm and a /proc of the new PID
// namespace.
func setupMounts(p Plan) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := setReadOnly("/", true); err != nil {
		return fmt.Errorf("making the filesystem read-only: %w", err)
	}
	for _, w := range p.Writable {
		if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding writable %s: %w", w, err)
		}
		err := unix.MountSetattr(-1, w, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
		if err != nil && !errors.Is(err, unix.EPERM) {
			// EPERM: the mount was read-only before (locked); it stays so.
			return fmt.Errorf("making %s writable: %w", w, err)
		}
	}
	// The home is hidden once the writable roots are bound, so that
	// one beneath it comes back writable (home_linux.go).
	if err := hideHome(p); err != nil {
		return err
	}
	if err := pinAncestors(p); err != nil {
		return err
	}
	for _, r := range p.ReadOnly {
		if err := unix.Mount(r, r, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("binding read-only %s: %w", r, err)
		}
		if err := setReadOnly(r, true); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
				// The name was moved away since the bind (the server
				// moving aside a protected name a running command made,
				// ENOENT) and perhaps made again (EINVAL: no longer the
				// bind's root). The bind went with the name; no other
				// command can move a name it holds read-only (a mount
				// point), so what moved was a command's, and the server
				// guards the name itself.
				continue
			}
			return fmt.Errorf("making %s read-only: %w", r, err)
		}
	}
	if err := bindWritableAgain(p); err != nil {
		return err
	}
	for _, m := range p.Masked {
		st, err := os.Stat(m)
		if err != nil {
			continue
		}
		if st.IsDir() {
			err = unix.Mount("tmpfs", m, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
		} else {
			err = unix.Mount(p.EmptyFile, m, "", unix.MS_BIND, "")
			if err == nil {
				err = setReadOnly(m, false)
			}
		}
		if errors.Is(err, unix.ENOENT) {
			// Gone since the stat (another session's state directory
			// removed as that session ended): nothing left to read.
			continue
		}
		if err != nil {
			return fmt.Errorf("masking %s: %w", m, err)
		}
	}
	for _, o := range p.Overlays {
		if err := unix.Mount(o.Src, o.Dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("binding the masked copy over %s: %w", o.Dst, err)
		}
		if err := setReadOnly(o.Dst, false); err != nil {
			return fmt.Errorf("binding the masked copy over %s: %w", o.Dst, err)
		}
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("private /dev/shm: %w", err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	return nil
}

func setReadOnly(path string, recursive bool) error {
	flags := uint(0)
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	return unix.MountSetattr(-1, path, flags, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
}

// loopbackUp brings up lo in a new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// devFiles are the devices a command may open for writing.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrictLandlock confines writes to the writable roots (and a few
// devices), refuses TCP when the network is off and no network namespace
// holds it, and scopes signals and abstract unix sockets, with the best
// the kernel's Landlock ABI offers.
func restrictLandlock(p Plan) error {
	cfg := landlock.V6.BestEffort()
	// Signals and abstract sockets are scoped in the command's own
	// domain, nested below this one (lockdown_linux.go): a scope here
	// would keep the launcher's threads, each in a domain of its own
	// before ABI 8, from signalling the command.
	cfg.Scoped = 0
	if !(p.NetworkOff || p.Supervised) || p.Namespaces {
		cfg.HandledAccessNet = 0
	}
	rules := append(readRules(p), // home_linux.go
		landlock.RWDirs(p.Writable...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(devFiles...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	)
	if p.Namespaces {
		// /dev/shm is a private tmpfs; /proc is the PID namespace's own,
		// and init writes the shell's user namespace maps there.
		rules = append(rules, landlock.RWDirs("/dev/shm").IgnoreIfMissing(), landlock.RWFiles("/proc"))
	}
	return cfg.Restrict(rules...)
}

// restrictSockets installs the socket filter (seccomp.go) on every thread
// of init, so the shell and what it starts inherit it. Where no filter is
// built for the architecture nothing is installed.
func restrictSockets() error {
	sets := archSyscalls()
	if sets == nil {
		return nil
	}
	ins, err := socketFilter(sets)
	if err != nil {
		return err
	}
	return installSeccomp(ins, unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// probeChild checks, inside fresh namespaces, that the mounts the sandbox
// makes are possible.
func probeChild() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := setReadOnly("/", true); err != nil {
		return fmt.Errorf("remounting read-only: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	return loopbackUp()
}

// LandlockABI is the kernel's Landlock ABI version, or why there is none.
func LandlockABI() (int, error) {
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case err != nil:
		return 0, fmt.Errorf("the kernel has no Landlock (needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK and landlock in the lsm= boot parameter; in a container, a seccomp profile that allows landlock_create_ruleset, landlock_add_rule and landlock_restrict_self): %w", err)
	case abi < 1:
		return 0, errors.New("the kernel reports no Landlock ABI")
	}
	return abi, nil
}

// ProbeNamespaces reports why the namespaces the sandbox needs cannot be
// made here, trying them with launcher (the agent-mcp binary); nil when
// they can.
func ProbeNamespaces(launcher string) error {
	cmd := exec.Command(launcher, HiddenCommand, "probe")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  nsFlags(true),
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("user namespaces are unavailable (needs unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0 where they exist, user.max_user_namespaces above 0, and in a container a seccomp profile that allows unshare and clone of namespaces, e.g. docker run --security-opt seccomp=unconfined): %s", msg)
	}
	return nil
}

// SupervisorSupport says why the supervised egress mode (seccomp.go) is
// unavailable here, or nil: it needs a socket filter for the
// architecture, seccomp user notification with SECCOMP_IOCTL_NOTIF_ADDFD
// (Linux 5.9+) and pidfd_getfd (5.6+).
func SupervisorSupport() error {
	if archSyscalls() == nil {
		return errors.New("no socket filter is built for this architecture")
	}
	var sizes [3]uint16
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptr(unsafe.Pointer(&sizes))); errno != 0 {
		return fmt.Errorf("no seccomp user notification (Linux 5.0+): %w", errno)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return err
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil || major < 5 || major == 5 && minor < 9 {
		return fmt.Errorf("the kernel (%s) has no SECCOMP_IOCTL_NOTIF_ADDFD (Linux 5.9+)", unix.ByteSliceToString(u.Release[:]))
	}
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("no pidfd_open (Linux 5.3+): %w", err)
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, pidfd, 0)
	if err != nil {
		return fmt.Errorf("no pidfd_getfd (Linux 5.6+): %w", err)
	}
	unix.Close(fd)
	return nil
}

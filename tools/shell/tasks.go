package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox/proc"

	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/sandbox/egress"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Task statuses (TaskOutput reports them).
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusKilled    = "killed"
)

// defaultGrace is how long a process group has to exit after SIGTERM
// before it gets SIGKILL.
const defaultGrace = 2 * time.Second

// drainWait is how long a finished command's output is awaited when
// processes it left behind keep the output open.
const drainWait = 250 * time.Millisecond

// drainWaitGone bounds the wait for the rest of a finished command's output
// when its process group is empty: no process of the command holds the
// output open any more, so the end of the output is only a matter of the
// copy catching up (which can take a while on a loaded machine). The bound
// only matters for a process that left the group (setsid) yet kept the
// output open.
const drainWaitGone = 10 * time.Second

// Manager runs a session's commands and keeps its background tasks. There
// is one per session, kept in the session's slot; closing it (at session
// end) kills every process group it started.
type Manager struct {
	dir       string // where output files go
	sessionID string

	rootOnce sync.Once
	root     *os.Root // dir, opened once: files are made in it by name, never through a link
	rootErr  error

	mu sync.Mutex
	// lingering are the captures of forgotten commands whose result may
	// still read their file; released when the next command starts.
	lingering []*capture
	// leftovers are finished foreground commands that left processes in
	// their group, whose output has ended: forgotten at the first start
	// that finds their group gone (until then, killed at session end).
	leftovers []*Task
	tasks     map[string]*Task
	order     []*Task
	seq       int // commands started
	public    int // tasks made visible: bash_1, bash_2, ...
	closed    bool
}

type managerKey struct{}

// managerFor returns the session's task manager, making it on first use.
func managerFor(s *tools.Session) *Manager {
	return s.Slot(managerKey{}, func() any {
		return &Manager{
			dir:       filepath.Join(s.StateDir(), "tasks"),
			sessionID: s.ID(),
			tasks:     map[string]*Task{},
		}
	}).(*Manager)
}

// tasksDir returns the task directory, made and opened on first use.
func (m *Manager) tasksDir() (*os.Root, error) {
	m.rootOnce.Do(func() {
		if err := os.MkdirAll(m.dir, 0o700); err != nil {
			m.rootErr = fmt.Errorf("creating the task directory: %w", err)
			return
		}
		m.root, m.rootErr = os.OpenRoot(m.dir)
		if m.rootErr != nil {
			m.rootErr = fmt.Errorf("opening the task directory: %w", m.rootErr)
		}
	})
	return m.root, m.rootErr
}

// discard removes a forgotten task's output file; its descriptor is
// released when the next command starts (the result may still read it).
func (m *Manager) discard(t *Task) {
	if root, err := m.tasksDir(); err == nil {
		_ = root.Remove(filepath.Base(t.OutputPath))
	}
	m.linger(t)
}

// linger keeps a forgotten task's output readable until the next command
// starts.
func (m *Manager) linger(t *Task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lingering = append(m.lingering, t.out)
}

// letGo lets a finished foreground command go: forgotten, its output file
// kept (keepFile: a result names it) or removed, and its descriptor
// released when the next command starts; or, while processes of its
// group live on, kept as a leftover (its file then stays). It reports
// whether the command was forgotten.
func (m *Manager) letGo(t *Task, keepFile bool) bool {
	if !m.forget(t) {
		m.leftover(t)
		return false
	}
	if keepFile {
		m.linger(t)
	} else {
		m.discard(t)
	}
	return true
}

// leftover keeps a finished foreground command whose group still has
// processes (forget refused it): they are ended at session end. Once they
// have all let its output go, its output file's descriptor is released
// as a forgotten command's is, and the first command started after its
// group is gone forgets it. Without this each such command held a
// descriptor and a task until the session ended.
func (m *Manager) leftover(t *Task) {
	go func() {
		<-t.out.done // the pipe's last writer closed it, or Close finished it
		m.mu.Lock()
		defer m.mu.Unlock()
		m.lingering = append(m.lingering, t.out)
		m.leftovers = append(m.leftovers, t)
	}()
}

// sweepLeftovers forgets the leftovers whose group is gone.
func (m *Manager) sweepLeftovers() {
	m.mu.Lock()
	all := m.leftovers
	m.leftovers = nil
	m.mu.Unlock()
	var kept []*Task
	for _, t := range all {
		if !m.forget(t) {
			kept = append(kept, t)
		}
	}
	if len(kept) > 0 {
		m.mu.Lock()
		m.leftovers = append(m.leftovers, kept...)
		m.mu.Unlock()
	}
}

func cmpOr[T comparable](v, dflt T) T {
	var zero T
	if v == zero {
		return dflt
	}
	return v
}

// Task is one command started by Bash: a process group whose output goes
// to a file.
type Task struct {
	ID          string
	Command     string
	Description string
	OutputPath  string
	Started     time.Time
	// Ended is when the shell exited (zero while it runs); set under mu.
	Ended time.Time

	marker string        // value of the marker variable in its environment
	grace  time.Duration // between SIGTERM and SIGKILL
	cmd    *exec.Cmd
	pgid   int
	out    *capture
	reader *os.File      // the read side of the output pipe or terminal
	term   *os.File      // a background task's terminal (reader), where TaskInput writes; nil for a pipe
	done   chan struct{} // closed when the shell has exited

	mu       sync.Mutex
	status   string
	exitCode int
	reaped   bool // the shell was waited for: the pgid may be reused
	// alone is set with reaped when the sandbox's init said no other
	// process of the command was left as the shell ended: none is left
	// for good, whatever the group id names now.
	alone      bool
	killed     bool
	visible    bool // listed for TaskOutput/TaskStop
	background bool
	readOffset int64
	refused    []string         // protected names the sandbox moved aside when the shell ended
	slot       *backgroundSlots // the server-wide count this running background task is in

	typed typedState // what TaskInput typed into it, when it runs a shell
}

// backgroundSlots counts the background tasks running across the sessions
// of one server, up to max.
type backgroundSlots struct {
	mu      sync.Mutex
	max     int
	running int
	stats   *Stats // told of the count, if set
}

// take counts one more running background task, or reports false at the
// cap. A nil *backgroundSlots has no cap.
func (b *backgroundSlots) take() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running >= b.max {
		return false
	}
	b.running++
	if b.stats != nil {
		b.stats.background.Store(int64(b.running))
	}
	return true
}

// give counts one background task fewer.
func (b *backgroundSlots) give() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running--
	if b.stats != nil {
		b.stats.background.Store(int64(b.running))
	}
}

// full words the server-wide cap being reached.
func (b *backgroundSlots) full() string {
	return fmt.Sprintf("this server already has %d background tasks running across its sessions, the most allowed (--max-server-background-tasks)", b.max)
}

// takeSlot counts a task moving to the background in slots while it runs,
// and reports false when slots is full. A task that has already ended needs
// no slot.
func (t *Task) takeSlot(slots *backgroundSlots) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if slots == nil || t.status != StatusRunning || t.slot != nil {
		return true
	}
	if !slots.take() {
		return false
	}
	t.slot = slots
	return true
}

// Status returns the task's status and exit code (meaningful once it is
// not running).
func (t *Task) Status() (string, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.exitCode
}

// Done is closed when the task's shell has exited.
func (t *Task) Done() <-chan struct{} { return t.done }

// startSpec says how to start a command.
type startSpec struct {
	command, description string
	script               string // what bash -c runs (the command with its trailer)
	dir                  string
	pty                  bool
	visible              bool
	grace                time.Duration
	fileLimit            int64
	// maxBackground caps the running background tasks a visible
	// (background) start may join; 0 means no cap.
	maxBackground int
	// slots is the server-wide count a visible start must find room in.
	slots *backgroundSlots
	// stats counts the start (nil: not counted).
	stats *Stats
	// sandbox confines the command (nil: unconfined), with the session's
	// working and state directories writable.
	sandbox *sandbox.Sandbox
	// excluded runs the command outside the sandbox (an excluded
	// command's line).
	excluded bool
	workDirs []string
	stateDir string
	// files are inherited by the shell as descriptors 3, 4, ...
	files []*os.File
	// egress serves the command's connections through the sandbox's
	// egress proxy (network.go); nil when the network is not proxied.
	egress *egress.Handler
	// session is the command's session (its proxied commands, network.go).
	session *tools.Session
	// envAllow are the further variables the command gets (commandEnv).
	envAllow []string
}

// runningBackground counts the session's background tasks still running.
func (m *Manager) runningBackground() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runningBackgroundLocked()
}

func (m *Manager) runningBackgroundLocked() int {
	n := 0
	for _, t := range m.order {
		t.mu.Lock()
		if t.background && t.status == StatusRunning {
			n++
		}
		t.mu.Unlock()
	}
	return n
}

// ErrManagerClosed is returned when a command is started in a session that
// is ending.
var ErrManagerClosed = errors.New("the session is closing; no new commands can start")

// start runs spec.script with bash in its own process group.
func (m *Manager) start(spec startSpec) (*Task, error) {
	id, slot, err := m.admit(spec)
	if err != nil {
		return nil, err
	}
	t, err := m.launch(spec, id, slot)
	if err != nil && slot != nil {
		slot.give()
	}
	return t, err
}

// admit makes room for a start: it refuses one when the session is
// closing or a background task over the caps, and names the task. slot is
// the server-wide background slot taken, which the caller gives back if
// the start fails.
func (m *Manager) admit(spec startSpec) (id string, slot *backgroundSlots, err error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return "", nil, ErrManagerClosed
	}
	if spec.visible && spec.maxBackground > 0 {
		if n := m.runningBackgroundLocked(); n >= spec.maxBackground {
			m.mu.Unlock()
			return "", nil, fmt.Errorf("this session already has %d background tasks running, the most allowed (--max-background-tasks): end one with TaskStop, or wait for one to finish (TaskOutput with block), then retry", n)
		}
	}
	if spec.visible && spec.slots != nil {
		if !spec.slots.take() {
			m.mu.Unlock()
			return "", nil, fmt.Errorf("%s: end one with TaskStop, or wait for one to finish (TaskOutput with block), then retry", spec.slots.full())
		}
		slot = spec.slots
	}
	// A background task is named for TaskOutput at once; a foreground
	// command gets an internal name, and a public one only if it moves to
	// the background.
	m.seq++
	id = fmt.Sprintf("cmd_%d", m.seq)
	if spec.visible {
		m.public++
		id = fmt.Sprintf("bash_%d", m.public)
	}
	lingering := m.lingering
	m.lingering = nil
	m.mu.Unlock()
	for _, c := range lingering {
		c.release()
	}
	m.sweepLeftovers()
	return id, slot, nil
}

// launch starts the admitted task id: its output file, the confined
// command, the pipe or terminal its output comes through, and the reaper
// that records how it ended.
func (m *Manager) launch(spec startSpec, id string, slot *backgroundSlots) (*Task, error) {
	root, err := m.tasksDir()
	if err != nil {
		return nil, err
	}
	t := &Task{
		ID: id, Command: spec.command, Description: spec.description,
		OutputPath: filepath.Join(m.dir, id+".output"),
		Started:    time.Now(), marker: m.sessionID + "/" + id, grace: cmpOr(spec.grace, defaultGrace),
		done: make(chan struct{}), status: StatusRunning,
		visible: spec.visible, background: spec.visible, slot: slot,
	}
	out, err := newCapture(root, id+".output", t.OutputPath, spec.fileLimit)
	if err != nil {
		return nil, err
	}
	t.out = out
	if spec.egress != nil {
		// A refused connection is one line of the command's output.
		spec.egress.Notice = (&refusalLines{write: func(line string) { _, _ = t.out.Write([]byte(line + "\n")) }}).say
	}
	launch, err := commandOf(spec, t)
	if err != nil {
		out.finish()
		return nil, err
	}
	reader, writer, err := outputEnds(launch.Cmd, spec.pty, launch.Confined())
	if err != nil {
		out.finish()
		return nil, err
	}
	launch.Cmd.Stdout, launch.Cmd.Stderr = writer, writer
	if err := m.begin(spec, t, launch, reader, writer); err != nil {
		out.finish()
		return nil, err
	}
	go out.copyFrom(reader)
	go t.reap(launch, reader, spec.stats)
	return t, nil
}

// commandOf is the command that runs spec's script for t: bash, confined
// by the sandbox, in the task's directory and environment, detached from
// the server's terminal.
func commandOf(spec startSpec, t *Task) (*sandbox.Launch, error) {
	shell, err := findBash()
	if err != nil {
		return nil, err
	}
	launch, err := spec.sandbox.Command(sandbox.Spec{
		Shell: shell, Script: spec.script, Excluded: spec.excluded, Dir: spec.dir,
		WorkDirs: spec.workDirs, StateDir: spec.stateDir, Files: spec.files, Egress: spec.egress,
	}, t.grace)
	if err != nil {
		return nil, err
	}
	if spec.egress != nil && spec.session != nil {
		spec.egress.Loopback = loopbackFor(spec.session, launch)
	}
	cmd := launch.Cmd
	cmd.Dir = spec.dir
	cmd.Env = launch.Environ(commandEnv(t.marker, spec.pty, spec.envAllow))
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// No command keeps the server's controlling terminal (the terminal
	// `serve` or `chat` was started on: TIOCSTI would type into the
	// user's shell): see detach. Either way pgid is the started
	// process's pid.
	detach(cmd.SysProcAttr, launch.Confined())
	// A foreground command's stdin stays nil: it reads /dev/null.
	return launch, nil
}

// outputEnds are the two ends the command's output goes through: a
// terminal for a command that wants one (a background task reads its
// terminal: TaskInput types into it), else a pipe.
func outputEnds(cmd *exec.Cmd, pty, confined bool) (reader, writer *os.File, err error) {
	if pty && hasTerminals {
		master, slave, err := openTerminal(cmd, confined)
		if err != nil {
			return nil, nil, err
		}
		return master, slave, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("creating the output pipe: %w", err)
	}
	return r, w, nil
}

// begin starts the command and records t as the manager's, unless the
// session closed meanwhile. On failure it closes both output ends.
func (m *Manager) begin(spec startSpec, t *Task, launch *sandbox.Launch, reader, writer *os.File) error {
	cmd := launch.Cmd
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		reader.Close()
		writer.Close()
		return ErrManagerClosed
	}
	err := cmd.Start()
	launch.Started(err)
	if err == nil && spec.egress != nil && spec.session != nil {
		proxiedOf(spec.session).add(launch)
	}
	writer.Close()
	if err != nil {
		m.mu.Unlock()
		reader.Close()
		return fmt.Errorf("starting bash: %w", err)
	}
	spec.stats.started(launch.Confined())
	t.cmd, t.pgid, t.reader = cmd, cmd.Process.Pid, reader
	if spec.pty && hasTerminals {
		t.term = reader
	}
	m.tasks[t.ID] = t
	m.order = append(m.order, t)
	m.mu.Unlock()
	return nil
}

// reap waits for the task's shell to exit and records how it ended, once
// its output is read (or has had time to be), then closes reader.
func (t *Task) reap(launch *sandbox.Launch, reader *os.File, stats *Stats) {
	out := t.out
	code := launch.Wait()
	alone := launch.Alone()
	refused := launch.Refused()
	if stats != nil && launch.Confined() && code == sandbox.SetupFailed {
		stats.setupFailures.Add(1)
	}
	// Output still in the pipe is read before the task is final;
	// processes left running in the background may keep it open, so
	// the wait is bounded (their output still reaches the file).
	wait := drainWait
	if proc.Gone(t.pgid) {
		wait = drainWaitGone
	}
	select {
	case <-out.done:
	case <-time.After(wait):
	}
	t.mu.Lock()
	t.reaped = true
	t.alone = alone
	t.exitCode = code
	t.refused = refused
	t.Ended = time.Now()
	switch {
	case t.killed:
		t.status = StatusKilled
	case code == 0:
		t.status = StatusCompleted
	default:
		t.status = StatusFailed
	}
	if t.slot != nil {
		t.slot.give()
		t.slot = nil
	}
	t.mu.Unlock()
	close(t.done)
	go func() {
		// Close the reader once the output ends or the group is gone,
		// so the copy does not outlive the processes.
		<-out.done
		reader.Close()
	}()
}

// Get returns a visible task by id.
func (m *Manager) Get(id string) (*Task, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t, t.visible
}

// ids lists the visible tasks' ids, oldest first.
func (m *Manager) ids() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, t := range m.order {
		t.mu.Lock()
		if t.visible {
			out = append(out, t.ID)
		}
		t.mu.Unlock()
	}
	return out
}

// forget drops a finished foreground task whose processes are all gone,
// and reports whether it did.
func (m *Manager) forget(t *Task) bool {
	// Any member of the group keeps the task, marker read or not: a
	// process the shell left behind may be in the middle of its exec,
	// when /proc shows no environment to find the marker in, and a task
	// forgotten is never killed at session end. (Its group id was the
	// shell's pid, reaped a moment ago; the session end checks the
	// marker again before it signals.)
	if t.groupAlive() || !t.endedAlone() && proc.Exists(t.pgid) {
		return false // killed at session end
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tasks, t.ID)
	if i := slices.Index(m.order, t); i >= 0 {
		m.order = slices.Delete(m.order, i, i+1)
	}
	return true
}

// publish turns a foreground task into a background one: it gets the next
// public id (its output file is renamed to match; the command keeps
// writing to it), and its first shown bytes of output count as read.
func (m *Manager) publish(t *Task, shown int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.public++
	id := fmt.Sprintf("bash_%d", m.public)
	path := filepath.Join(m.dir, id+".output")
	// By name within the task directory: a link planted under the new
	// name is replaced, not followed. The output is read back through
	// the capture's descriptor whatever happens to the names.
	if err := m.root.Rename(filepath.Base(t.OutputPath), id+".output"); err == nil {
		t.OutputPath = path
		t.out.mu.Lock()
		t.out.path = path
		t.out.mu.Unlock()
	}
	delete(m.tasks, t.ID)
	t.ID = id
	m.tasks[id] = t
	t.mu.Lock()
	defer t.mu.Unlock()
	t.visible, t.background = true, true
	t.readOffset = shown
}

// Stop ends the task's process group: SIGTERM, then SIGKILL after grace.
// It reports false when the task had already finished.
func (m *Manager) Stop(t *Task) bool {
	t.mu.Lock()
	running := t.status == StatusRunning
	t.killed = t.killed || running
	t.mu.Unlock()
	killGroups([]*Task{t})
	if running {
		<-t.done
	}
	return running
}

// Close kills every process group the manager started (SIGTERM, grace,
// SIGKILL) and waits for their shells. Later starts fail. Safe to call
// more than once.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	all := slices.Clone(m.order)
	m.mu.Unlock()
	for _, t := range all {
		t.mu.Lock()
		if t.status == StatusRunning {
			t.killed = true
		}
		t.mu.Unlock()
	}
	killGroups(all)
	for _, t := range all {
		<-t.done
		select {
		case <-t.out.done:
		case <-time.After(t.grace):
			// A process that left the group still holds the output open.
			t.reader.Close()
			t.out.finish()
		}
		t.out.release()
	}
	m.mu.Lock()
	lingering := m.lingering
	m.lingering = nil
	m.mu.Unlock()
	for _, c := range lingering {
		c.release()
	}
}

// killGroups sends SIGTERM to every live group, waits up to the tasks'
// grace for them to empty, then sends SIGKILL to what is left.
func killGroups(ts []*Task) {
	var live []*Task
	var grace time.Duration
	for _, t := range ts {
		if t.signal(syscall.SIGTERM) {
			live = append(live, t)
			grace = max(grace, t.grace)
		}
	}
	if len(live) == 0 {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		live = slices.DeleteFunc(live, func(t *Task) bool { return !t.groupAlive() })
		if len(live) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, t := range live {
		t.signal(syscall.SIGKILL)
	}
}

// signal sends sig to the task's process group and reports whether the
// group had members. Once the shell has been reaped the group id could
// belong to someone else, so the group is only signalled while a member
// carries this task's marker.
func (t *Task) signal(sig syscall.Signal) bool {
	t.mu.Lock()
	reaped, alone := t.reaped, t.alone
	t.mu.Unlock()
	if alone || reaped && !t.markedMemberExists() {
		return false
	}
	return proc.Signal(t.pgid, sig) == nil
}

// groupAlive reports whether any process of the task's group remains.
func (t *Task) groupAlive() bool {
	t.mu.Lock()
	reaped, alone := t.reaped, t.alone
	t.mu.Unlock()
	if alone {
		// The group may still hold the sandbox's init, ending (its
		// namespaces coming down): nothing of the command.
		return false
	}
	if reaped {
		return t.markedMemberExists()
	}
	return proc.Exists(t.pgid)
}

// endedAlone reports whether the sandbox's init said no other process of
// the command was left as its shell ended.
func (t *Task) endedAlone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.alone
}

// markedMemberExists scans /proc for a live process in the task's group
// whose environment carries the task's marker.
func (t *Task) markedMemberExists() bool {
	if !proc.Exists(t.pgid) {
		return false // nobody in the group at all
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		// No /proc: trust the group id where it names a group.
		return proc.GroupIDLasts && proc.Exists(t.pgid)
	}
	want := []byte(markerVar + "=" + t.marker + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pgid, state, ok := procStat(pid)
		if !ok || pgid != t.pgid || state == 'Z' {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && containsBytes(append([]byte{0}, env...), append([]byte{0}, want...)) {
			return true
		}
	}
	return false
}

// procStat reads a process's group id and state from /proc/PID/stat.
func procStat(pid int) (pgid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	// The command name is in parentheses and may hold spaces.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil || len(f[0]) == 0 {
		return 0, 0, false
	}
	return pg, f[0][0], true
}

func containsBytes(haystack, needle []byte) bool {
	return strings.Contains(string(haystack), string(needle))
}

package tools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/permissions"
)

// Session is the state of one client's session: one per stdio process, one
// per MCP session over HTTP, one per chat conversation. It is safe for
// concurrent use.
type Session struct {
	id       string
	stateDir string

	mu       sync.Mutex
	cwd      string
	workDirs []string
	mode     permissions.Mode
	files    map[string]FileState
	todos    []Todo
	slots    map[any]any
	closers  []func()
	closed   bool
	// closeDone is closed when the first Close has finished, so that a
	// concurrent Close returns only once the session is really closed.
	closeDone chan struct{}
}

// SessionOptions configure a new Session.
type SessionOptions struct {
	// ID names the session; a random one is made when empty.
	ID string
	// Cwd is the starting directory (absolute); default the process's.
	Cwd string
	// WorkDirs are further working directories besides Cwd.
	WorkDirs []string
	// Mode is the starting permission mode; default [permissions.ModeDefault].
	Mode permissions.Mode
	// StateRoot is where the session's private directory is made; default
	// a per-user directory under the system temp directory.
	StateRoot string
}

// NewSession makes a session and its private state directory.
func NewSession(opts SessionOptions) (*Session, error) {
	if opts.ID == "" {
		opts.ID = RandomID()
	}
	if opts.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("new session: current directory: %w", err)
		}
		opts.Cwd = wd
	}
	cwd, err := filepath.Abs(opts.Cwd)
	if err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	if opts.Mode == "" {
		opts.Mode = permissions.ModeDefault
	}
	if opts.StateRoot == "" {
		opts.StateRoot = filepath.Join(os.TempDir(), fmt.Sprintf("agent-mcp-%d", os.Getuid()))
	}
	if err := os.MkdirAll(opts.StateRoot, 0o700); err != nil {
		return nil, fmt.Errorf("new session: state directory: %w", err)
	}
	dir, err := os.MkdirTemp(opts.StateRoot, "session-*")
	if err != nil {
		return nil, fmt.Errorf("new session: state directory: %w", err)
	}
	s := &Session{
		id:       opts.ID,
		stateDir: dir,
		cwd:      filepath.Clean(cwd),
		mode:     opts.Mode,
		files:    map[string]FileState{},
		slots:    map[any]any{},
	}
	dirs := []string{s.cwd}
	for _, d := range opts.WorkDirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("new session: working directory %q: %w", d, err)
		}
		if !slices.Contains(dirs, a) {
			dirs = append(dirs, filepath.Clean(a))
		}
	}
	s.workDirs = dirs
	return s, nil
}

// RandomID returns 128 random bits in hex.
func RandomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// ID names the session.
func (s *Session) ID() string { return s.id }

// StateDir is the session's private directory (persisted results, task
// output). It is removed when the session closes.
func (s *Session) StateDir() string { return s.stateDir }

// Cwd is the session's current directory.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// SetCwd changes the current directory; dir must be absolute.
func (s *Session) SetCwd(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cwd = filepath.Clean(dir)
}

// WorkDirs are the working directories: the starting directory first.
func (s *Session) WorkDirs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.workDirs)
}

// SetWorkDirs replaces the working directories (e.g. narrowed by MCP roots).
func (s *Session) SetWorkDirs(dirs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workDirs = slices.Clone(dirs)
}

// Mode is the session's permission mode.
func (s *Session) Mode() permissions.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// SetMode changes the permission mode.
func (s *Session) SetMode(m permissions.Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// Resolve turns a path given by a caller into an absolute, cleaned path:
// "~/" expands to the home directory and relative paths resolve against the
// current directory. It does not resolve symlinks or check confinement.
func (s *Session) Resolve(p string) string {
	return resolveIn(s.Cwd(), p)
}

func resolveIn(dir, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p[1:], "/"))
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// Display renders an absolute path for output: relative to the current
// directory when inside it, absolute otherwise.
func (s *Session) Display(abs string) string {
	cwd := s.Cwd()
	rel, err := filepath.Rel(cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return rel
}

// FileState is what the session knows of a file it read or wrote.
type FileState struct {
	// Fingerprint is the SHA-256 of the file's bytes when last seen.
	Fingerprint [32]byte
	ModTime     time.Time
	Size        int64
	// Partial is true when only a range of the file was read.
	Partial bool
	// Seen is when the session recorded this state.
	Seen time.Time
}

// RecordFile stores the state of the file at abs.
func (s *Session) RecordFile(abs string, st FileState) {
	if st.Seen.IsZero() {
		st.Seen = time.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[abs] = st
}

// File returns what the session knows of the file at abs.
func (s *Session) File(abs string) (FileState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.files[abs]
	return st, ok
}

// Todo is one item of the session's todo list.
type Todo struct {
	Content    string `json:"content" jsonschema:"What is to be done, in the imperative"`
	Status     string `json:"status" jsonschema:"pending, in_progress or completed"`
	ActiveForm string `json:"activeForm" jsonschema:"The same in the present continuous, shown while in progress"`
}

// Todos returns the todo list.
func (s *Session) Todos() []Todo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.todos)
}

// SetTodos replaces the todo list and returns the previous one.
func (s *Session) SetTodos(todos []Todo) (old []Todo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, s.todos = s.todos, slices.Clone(todos)
	return old
}

// Slot returns the session's value under key, making it with init the first
// time. Tool families keep their own state this way (background tasks,
// fetch caches) without this package knowing their types. If the value
// has a Close() method it is called when the session closes.
func (s *Session) Slot(key any, init func() any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.slots[key]; ok {
		return v
	}
	v := init()
	s.slots[key] = v
	if c, ok := v.(interface{ Close() }); ok {
		s.closers = append(s.closers, c.Close)
	}
	return v
}

// OnClose registers f to run when the session closes.
func (s *Session) OnClose(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closers = append(s.closers, f)
}

// ErrClosed is returned for work asked of a closed session.
var ErrClosed = errors.New("session closed")

// Closed reports whether Close has been called.
func (s *Session) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close ends the session: closers run in reverse order of registration
// (background tasks are killed), then the state directory is removed.
// It is safe to call more than once, also concurrently: every call returns
// only once the first has finished (a server exiting after Close must not
// cut a kill sequence short).
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		done := s.closeDone
		s.mu.Unlock()
		<-done // another Close is killing processes; wait for it
		return nil
	}
	s.closed = true
	s.closeDone = make(chan struct{})
	defer close(s.closeDone)
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	if err := os.RemoveAll(s.stateDir); err != nil {
		return fmt.Errorf("closing session %s: %w", s.id, err)
	}
	return nil
}

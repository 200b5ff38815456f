package lsp

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Default waits for diagnostics after a change.
const (
	// DefaultDiagnosticsWait bounds the wait once the server is warm
	// (it has published diagnostics since it started).
	DefaultDiagnosticsWait = 3 * time.Second
	// coldFactor multiplies the wait while the server is still loading
	// the workspace, on the first change of its language.
	coldFactor = 5
)

// Options configure the language servers of a [Service].
type Options struct {
	// Servers are the servers in effect (see [Resolve]); those whose
	// command was not found are listed but never started.
	Servers []ServerConfig
	// Sandbox confines the servers as it confines Bash's commands (nil:
	// unconfined, as Bash is then).
	Sandbox *sandbox.Sandbox
	// EnvAllow are the server's variables a language server gets beyond
	// those a shell and a build need (sandbox.env.allow), as Bash's
	// commands do.
	EnvAllow []string
	// Excluded reports whether a server's command line runs outside the
	// sandbox (sandbox.excludedCommands, as the Bash tool decides it);
	// nil means none does.
	Excluded func(line string) bool
	// DiagnosticsWait bounds the wait for a warm server's diagnostics
	// after a change; 0 means DefaultDiagnosticsWait.
	DiagnosticsWait time.Duration
}

// Service is the language servers of one agent-mcp server: the
// configuration, shared by every session, and per session the running
// servers (one per workspace root and server), started on the first
// file of their language and stopped with the session.
type Service struct {
	opts  Options
	byExt map[string]int // extension → index in opts.Servers
}

// New returns the service for opts; nil when no server is usable, so
// that callers can tell "no language servers" apart with a nil check.
func New(opts Options) *Service {
	s := &Service{opts: opts, byExt: map[string]int{}}
	if s.opts.DiagnosticsWait <= 0 {
		s.opts.DiagnosticsWait = DefaultDiagnosticsWait
	}
	for i, c := range opts.Servers {
		if c.Path == "" {
			continue
		}
		for ext := range c.ExtensionToLanguage {
			s.byExt[strings.ToLower(ext)] = i
		}
	}
	if len(s.byExt) == 0 {
		return nil
	}
	return s
}

// Servers are the configured and found servers, for display.
func (s *Service) Servers() []ServerConfig {
	if s == nil {
		return nil
	}
	return s.opts.Servers
}

// serverFor returns the server for the file at path and its language.
func (s *Service) serverFor(path string) (*ServerConfig, string, bool) {
	if s == nil {
		return nil, "", false
	}
	ext := strings.ToLower(filepath.Ext(path))
	i, ok := s.byExt[ext]
	if !ok {
		return nil, "", false
	}
	c := &s.opts.Servers[i]
	for e, lang := range c.ExtensionToLanguage {
		if strings.EqualFold(e, ext) {
			return c, lang, true
		}
	}
	return nil, "", false
}

// Handles reports whether a server is configured for the file at path.
func (s *Service) Handles(path string) bool {
	_, _, ok := s.serverFor(path)
	return ok
}

// slotKey is the session slot holding a session's [manager].
type slotKey struct{}

// manager holds the running servers of one session.
type manager struct {
	mu      sync.Mutex
	clients map[clientKey]*client
	closed  bool
}

type clientKey struct{ root, name string }

// Close stops every server of the session (the session's end).
func (m *manager) Close() {
	m.mu.Lock()
	m.closed = true
	cs := make([]*client, 0, len(m.clients))
	for _, c := range m.clients {
		cs = append(cs, c)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(c.stop)
	}
	wg.Wait()
}

// clientFor returns the session's client for the file at path, made on
// first use (the process starts on the first request); ok is false when
// no server handles the file.
func (s *Service) clientFor(sess *tools.Session, path string) (*client, string, bool) {
	cfg, lang, ok := s.serverFor(path)
	if !ok {
		return nil, "", false
	}
	m := sess.Slot(slotKey{}, func() any { return &manager{clients: map[clientKey]*client{}} }).(*manager)
	root := workspaceRoot(sess.WorkDirs(), cfg.RootMarkers, path)
	key := clientKey{root: root, name: cfg.Name}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, "", false
	}
	c := m.clients[key]
	if c == nil {
		c = newClient(*cfg, root, env{sandbox: s.opts.Sandbox, excluded: s.opts.Excluded, workDirs: sess.WorkDirs(), stateDir: sess.StateDir(), envAllow: s.opts.EnvAllow})
		m.clients[key] = c
	}
	return c, lang, true
}

// workspaceRoot is the directory a server for path works in: the nearest
// directory above path holding one of markers, not above the working
// directory that holds path; else that working directory; else the
// file's own directory.
func workspaceRoot(workDirs, markers []string, path string) string {
	dir := filepath.Dir(path)
	top := ""
	for _, w := range workDirs {
		if within(path, w) && len(w) > len(top) {
			top = w
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		if d == top || filepath.Dir(d) == d || (top != "" && !within(d, top)) {
			break
		}
	}
	if top != "" {
		return top
	}
	return dir
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Status is one running or started server of a session, for display
// and tests.
type Status struct {
	Name, Command, Root string
	// PID is the process id, 0 when it is not running.
	PID int
	// Starts counts how often it was started (restarts after a crash
	// included).
	Starts int
	// LastError is why it last failed to start or ended unexpectedly.
	LastError string
}

// Status lists the servers the session has started.
func (s *Service) Status(sess *tools.Session) []Status {
	if s == nil {
		return nil
	}
	m := sess.Slot(slotKey{}, func() any { return &manager{clients: map[clientKey]*client{}} }).(*manager)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Status
	for k, c := range m.clients {
		c.mu.Lock()
		st := Status{Name: k.name, Command: c.cfg.Command, Root: k.root, Starts: c.starts, LastError: c.lastErr}
		if c.proc != nil {
			st.PID = c.proc.pid
		}
		c.mu.Unlock()
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Root+out[i].Name < out[j].Root+out[j].Name })
	return out
}

// fileURI is the file:// URI of an absolute path.
func fileURI(path string) DocumentURI {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return DocumentURI(u.String())
}

// uriPath is the path of a file:// URI.
func uriPath(u DocumentURI) (string, error) {
	p, err := url.Parse(string(u))
	if err != nil || p.Scheme != "file" {
		return "", fmt.Errorf("not a file URI: %q", u)
	}
	return filepath.FromSlash(p.Path), nil
}

// waitFor is how long to wait for the diagnostics of client c.
func (s *Service) waitFor(c *client) time.Duration {
	if c.isWarm() {
		return s.opts.DiagnosticsWait
	}
	return coldFactor * s.opts.DiagnosticsWait
}

// context helper: a context bounded by deadline.
func until(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, deadline)
}

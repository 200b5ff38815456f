package testbin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Module is the import path of the agent-mcp main package.
const Module = "github.com/agent-mcp/agent-mcp"

// Main builds agent-mcp into a temporary directory, stores its path in
// *binary, runs the tests and removes the directory. Call it from TestMain.
func Main(m *testing.M, binary *string) {
	dir, err := os.MkdirTemp("", "agent-mcp-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*binary = filepath.Join(dir, "agent-mcp")
	if err := Build(*binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Build puts an up-to-date agent-mcp binary at out, a path of the caller's
// own. It is linked once per module checkout into a directory under the
// user's cache directory shared by every test process (under a file lock,
// and by go build, which links only when the sources changed since), then
// hard-linked or copied to out: linking the binary costs seconds of CPU,
// and `go test ./...` runs several packages that need it. It is built in
// the agent-mcp module's own directory, whose go.mod picks the versions,
// also when the caller is a module of its own that requires agent-mcp
// through a replace directive (deploy/). The go command is
// $GOROOT/bin/go when GOROOT is set, else the one on PATH.
func Build(out string) error {
	gobin := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		if _, err := os.Stat(filepath.Join(root, "bin", "go")); err == nil {
			gobin = filepath.Join(root, "bin", "go")
		}
	}
	root, err := exec.Command(gobin, "list", "-m", "-f", "{{.Dir}}", Module).Output()
	if err != nil {
		return fmt.Errorf("building agent-mcp: go list -m %s: %w", Module, err)
	}
	modDir := string(bytes.TrimSpace(root))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(filepath.Join(modDir, "go.mod")))
	dir := filepath.Join(cache, "agent-mcp-testbin", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("building agent-mcp: %w", err)
	}
	unlock, err := lockDir(dir)
	if errors.Is(err, errNoLock) {
		return goBuild(gobin, modDir, out)
	}
	if err != nil {
		return fmt.Errorf("building agent-mcp: locking %s: %w", dir, err)
	}
	defer unlock()
	shared := filepath.Join(dir, "agent-mcp")
	if err := goBuild(gobin, modDir, shared); err != nil {
		return err
	}
	// go build replaces the shared file (it never writes into it), so a
	// hard link keeps this process's binary as it is now.
	if err := os.Link(shared, out); err == nil {
		return nil
	}
	return CopyExecutable(out, shared)
}

// errNoLock is lockDir's answer where there is no file locking.
var errNoLock = errors.New("no file locking on this system")

// goBuild links agent-mcp, the module in modDir, to out.
func goBuild(gobin, modDir, out string) error {
	cmd := exec.Command(gobin, "build", "-o", out, Module)
	cmd.Dir = modDir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building agent-mcp: %v\n%s", err, b)
	}
	return nil
}

// CopyExecutable copies the executable src to a new file dst, safely
// while other goroutines of the test process start programs: a process
// forked while dst is open for writing inherits that descriptor until it
// execs, and running dst meanwhile fails with "text file busy" (ETXTBSY).
// Holding syscall.ForkLock for reading keeps forks out of that window.
func CopyExecutable(dst, src string) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return copyFile(dst, src)
}

// copyFile copies the executable src to dst (see [CopyExecutable]).
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return o.Close()
}

// HermeticEnv is the test process's environment with HOME, the XDG
// directories and agent-mcp's and Claude's settings variables pointed at
// fresh temporary directories, so a server started with it reads no real
// user settings. The cache directory (XDG_CACHE_HOME) stays the test
// process's own: a cache holds no settings, and the compiled PDF engine
// kept there saves every server that reads a PDF seconds of compiling.
func HermeticEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	var env []string
	private := []string{"HOME=", "XDG_", "AGENT_MCP_", "CLAUDE"}
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(private, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			env = append(env, kv)
		}
	}
	if cache, err := os.UserCacheDir(); err == nil {
		env = append(env, "XDG_CACHE_HOME="+cache)
	}
	return append(env, "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"AGENT_MCP_CONFIG_DIR="+filepath.Join(home, ".config", "agent-mcp"))
}

// ServeCmd is `agent-mcp serve` in its own working and state directories
// (temporary unless cwd is given) with a hermetic environment.
func ServeCmd(t testing.TB, binary, cwd string, extra ...string) *exec.Cmd {
	t.Helper()
	if cwd == "" {
		cwd = t.TempDir()
	}
	args := append([]string{"serve", "--cwd", cwd, "--state-dir", t.TempDir()}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = HermeticEnv(t)
	return cmd
}

// Stdio connects a go-sdk client to cmd (an agent-mcp serve command) over
// stdio; the session is closed when the test ends.
func Stdio(t testing.TB, cmd *exec.Cmd, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-mcp-test", Version: "1"}, opts).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// StartHTTP starts cmd (an agent-mcp serve --http command listening on
// port 0) and returns the URL it prints. The server gets SIGTERM and is
// waited for when the test ends.
func StartHTTP(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	return StartServer(t, cmd, "agent-mcp serving MCP at ")[0]
}

// StartServer starts cmd and waits until its standard error has printed a
// line starting with each of prefixes; it returns what follows each
// prefix on the first such line, in the order given. It fails the test,
// with what the process said, if the process's standard error ends first
// (it exited). Standard error is read to its end meanwhile; the process
// gets SIGTERM and is waited for when the test ends.
func StartServer(t testing.TB, cmd *exec.Cmd, prefixes ...string) []string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	found, done := make([]string, len(prefixes)), make([]bool, len(prefixes))
	var said []string
	for left := len(prefixes); left > 0; {
		line, ok := <-lines
		if !ok {
			t.Fatalf("%s ended before printing %q:\n%s", cmd.Path, prefixes, strings.Join(said, "\n"))
		}
		said = append(said, line)
		for i, p := range prefixes {
			if rest, ok := strings.CutPrefix(line, p); ok && !done[i] {
				found[i], done[i] = rest, true
				left--
			}
		}
	}
	go func() {
		for range lines {
		}
	}()
	return found
}

// Output collects what a process writes (its stderr, say) while the test
// reads it: a bytes.Buffer safe for concurrent use.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Bearer is an http.RoundTripper that adds Authorization: Bearer Token,
// or no Authorization header when Token is empty (a --no-auth server).
type Bearer struct{ Token string }

// RoundTrip implements http.RoundTripper.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.Token != "" {
		r.Header.Set("Authorization", "Bearer "+b.Token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// HTTP connects a go-sdk client to url with the bearer token; the session
// is closed when the test ends.
func HTTP(t testing.TB, url, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return HTTPVersion(t, url, token, opts, "")
}

// HTTPVersion is [HTTP] with the client offering protocol version (the
// go-sdk's newest when empty): "2025-11-25" gives a client with an MCP
// session over HTTP, where 2026-07-28 has none.
func HTTPVersion(t testing.TB, url, token string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: Bearer{token}}}
	var copts *mcp.ClientSessionOptions
	if version != "" {
		copts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-mcp-test", Version: "1"}, opts).Connect(context.Background(), tr, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// CountProcs counts live processes whose command line holds the argument
// arg exactly (zombies have an empty command line and are not counted).
// Tests run commands with a unique argument (say `sleep 300.<random>`) and
// count them to prove no process outlived what should have ended it.
func CountProcs(arg string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), arg) {
			n++
		}
	}
	return n
}

// WaitProcs waits until exactly want processes carry arg, failing the test
// if that does not happen within bound (a liveness check, not a timing one).
func WaitProcs(t testing.TB, arg string, want int, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		n := CountProcs(arg)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes with argument %s, want %d", n, arg, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Text is the text of a tool result: its text contents, joined.
func Text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Bash runs command with the Bash tool (in the background when background
// is set) and returns the result's text and whether it is an error.
func Bash(t testing.TB, cs *mcp.ClientSession, command string, background bool) (string, bool) {
	t.Helper()
	args := map[string]any{"command": command}
	if background {
		args["run_in_background"] = true
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: args})
	if err != nil {
		t.Fatalf("Bash %q: %v", command, err)
	}
	return Text(t, res), res.IsError
}

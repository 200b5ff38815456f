package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite the server section of every transcript with what the binary answered")

// binary is the agent-mcp binary TestMain builds from the module root.
var binary string

// responseTimeout bounds the wait for one response; generous because the
// machine may be busy with -race builds of other packages.
const responseTimeout = 90 * time.Second

func TestMain(m *testing.M) {
	flag.Parse() // -update, before testbin runs the tests
	testbin.Main(m, &binary)
}

// TestTranscripts replays every testdata/*.txtar against the real binary
// over stdio and compares the server's messages with the server section.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

// transcriptEnv holds one replay's directories and how they are written
// in transcripts.
type transcriptEnv struct {
	workspace, state, home string
	replacer               *strings.Replacer
}

func newTranscriptEnv(t *testing.T) *transcriptEnv {
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	e := &transcriptEnv{
		workspace: filepath.Join(root, "workspace"),
		state:     filepath.Join(root, "state"),
		home:      filepath.Join(root, "home"),
	}
	for _, d := range []string{e.workspace, e.state, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Longest first so a path never loses its tail to a shorter prefix.
	pairs := [][2]string{{e.workspace, "$WORKSPACE"}, {e.state, "$STATE"}, {e.home, "$HOME"}}
	slices.SortFunc(pairs, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	var args []string
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	e.replacer = strings.NewReplacer(args...)
	return e
}

// expand turns $WORKSPACE, $STATE and $HOME in s into the real paths.
func (e *transcriptEnv) expand(s string) string {
	return strings.NewReplacer("$WORKSPACE", e.workspace, "$STATE", e.state, "$HOME", e.home).Replace(s)
}

// scrubRule rewrites matches of re in every recorded message.
type scrubRule struct {
	re   *regexp.Regexp
	repl string
}

// transcript is a parsed txtar with everything the replay needs.
type transcript struct {
	file    string
	archive *archive
	args    []string
	env     []string
	init    json.RawMessage
	client  []string
	record  map[string]bool
	replies map[string]json.RawMessage
	scrub   []scrubRule
	want    map[string][]byte
}

func loadTranscript(t *testing.T, file string, e *transcriptEnv) *transcript {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tr := &transcript{file: file, archive: parseArchive(data), record: map[string]bool{},
		replies: map[string]json.RawMessage{}, want: map[string][]byte{}}
	sawClient := false
	for _, f := range tr.archive.Files {
		switch {
		case f.Name == "args":
			args, err := splitArgs(e.expand(strings.TrimSpace(string(f.Data))))
			if err != nil {
				t.Fatalf("%s: args: %v", file, err)
			}
			tr.args = args
		case f.Name == "env":
			for _, l := range nonEmptyLines(f.Data) {
				if !strings.Contains(l, "=") {
					t.Fatalf("%s: env line %q: expected KEY=VALUE", file, l)
				}
				tr.env = append(tr.env, e.expand(l))
			}
		case f.Name == "initialize":
			raw := bytes.TrimSpace([]byte(e.expand(string(f.Data))))
			if !json.Valid(raw) {
				t.Fatalf("%s: initialize: not valid JSON", file)
			}
			tr.init = raw
		case strings.HasPrefix(f.Name, "workspace/"):
			rel := strings.TrimPrefix(f.Name, "workspace/")
			path := filepath.Join(e.workspace, filepath.FromSlash(rel))
			if strings.HasSuffix(rel, "/") {
				if err := os.MkdirAll(path, 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(e.expand(string(f.Data))), 0o644); err != nil {
				t.Fatal(err)
			}
		case f.Name == "client":
			sawClient = true
			for _, l := range nonEmptyLines(f.Data) {
				tr.client = append(tr.client, e.expand(l))
			}
		case f.Name == "record":
			for _, l := range nonEmptyLines(f.Data) {
				tr.record[strings.TrimSpace(l)] = true
			}
		case strings.HasPrefix(f.Name, "reply/"):
			raw := bytes.TrimSpace([]byte(e.expand(string(f.Data))))
			if !json.Valid(raw) {
				t.Fatalf("%s: %s: not valid JSON", file, f.Name)
			}
			tr.replies[strings.TrimPrefix(f.Name, "reply/")] = raw
		case f.Name == "scrub":
			for _, l := range nonEmptyLines(f.Data) {
				pat, repl, ok := strings.Cut(l, " => ")
				if !ok {
					repl = "<scrubbed>"
				}
				re, err := regexp.Compile(pat)
				if err != nil {
					t.Fatalf("%s: scrub %q: %v", file, l, err)
				}
				tr.scrub = append(tr.scrub, scrubRule{re, repl})
			}
		case f.Name == "server":
		case strings.HasPrefix(f.Name, "want/"):
			tr.want[strings.TrimPrefix(f.Name, "want/")] = f.Data
		default:
			t.Fatalf("%s: unknown section %q (expected args, env, initialize, workspace/…, client, record, reply/…, scrub, server, want/…)", file, f.Name)
		}
	}
	if !sawClient {
		t.Fatalf("%s: no client section", file)
	}
	return tr
}

func nonEmptyLines(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, "\r"))
		}
	}
	return out
}

// splitArgs splits a command line on spaces, honouring single and double
// quotes.
func splitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// message is the part of a JSON-RPC message the runner routes on.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
}

func (m message) hasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// stdioClient drives one server process over its stdin and stdout.
type stdioClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *testbin.Output
	tr     *transcript
	env    *transcriptEnv
	got    []string // recorded, normalised messages
	closed bool     // the server closed its stdout
}

func startServer(t *testing.T, e *transcriptEnv, tr *transcript) *stdioClient {
	// Which sandbox layers exist depends on the machine's kernel, and with
	// one a confined command needs fewer questions: transcripts run without
	// the sandbox unless their args ask for it (e2e tests every layer), and
	// without language servers, which depend on what PATH holds.
	args := append([]string{"serve", "--cwd", e.workspace, "--state-dir", e.state, "--sandbox", "off", "--lsp", "off"}, tr.args...)
	cmd := exec.Command(binary, args...)
	cmd.Dir = e.workspace
	cmd.Env = append(filteredEnv(), "HOME="+e.home, "TMPDIR="+e.state)
	// User settings come from these: empty temporary directories, so no
	// real user's settings are read (a transcript's env may still set them).
	cmd.Env = append(cmd.Env, "AGENT_MCP_CONFIG_DIR="+filepath.Join(e.home, ".config", "agent-mcp"),
		"XDG_CONFIG_HOME="+filepath.Join(e.home, ".config"))
	// The cache directory stays the test process's: a cache holds no
	// settings, and the compiled PDF engine kept there saves each server
	// that reads a PDF seconds of compiling.
	if cache, err := os.UserCacheDir(); err == nil {
		cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
	}
	cmd.Env = append(cmd.Env, tr.env...)
	c := &stdioClient{t: t, cmd: cmd, lines: make(chan []byte, 64), stderr: &testbin.Output{}, tr: tr, env: e}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.stop() })
	return c
}

// filteredEnv is the test's environment without variables that would
// change the server's behaviour between machines.
func filteredEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "TMPDIR" || k == "XDG_CONFIG_HOME" || strings.HasPrefix(k, "AGENT_MCP_") || strings.HasPrefix(k, "CLAUDE") ||
			strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "OPENAI_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// send writes one line to the server's stdin.
func (c *stdioClient) send(line string) {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatalf("writing to the server: %v\nstderr:\n%s", err, c.stderr.String())
	}
}

// await reads messages until one satisfies done, answering server
// requests and recording what the transcript asks for. It reports false
// if the server closed its stdout first.
func (c *stdioClient) await(what string, done func(message) bool, record bool) bool {
	timer := time.NewTimer(responseTimeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.closed = true
				return false
			}
			var m message
			if err := json.Unmarshal(line, &m); err != nil {
				c.t.Fatalf("server wrote a line that is not a JSON-RPC message: %q\nstderr:\n%s", line, c.stderr.String())
			}
			if done(m) {
				if record {
					c.got = append(c.got, c.normalise(line))
				}
				return true
			}
			if m.Method != "" {
				if c.tr.record[m.Method] {
					c.got = append(c.got, c.normalise(line))
				}
				if m.hasID() {
					c.reply(m)
				}
				continue
			}
			// A response nobody waits for: keep it visible.
			if record {
				c.got = append(c.got, c.normalise(line))
			}
		case <-timer.C:
			c.t.Fatalf("%s: no answer within %v\nstderr:\n%s", what, responseTimeout, c.stderr.String())
		}
	}
}

// reply answers a server-to-client request from the transcript's reply
// sections, or with a method-not-found error.
func (c *stdioClient) reply(m message) {
	var resp map[string]any
	if result, ok := c.tr.replies[m.Method]; ok {
		resp = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}
	} else {
		resp = map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
			"code": -32601, "message": "the conformance client does not answer " + m.Method,
		}}
	}
	b, _ := json.Marshal(resp)
	c.send(string(b))
}

// normalise pretty-prints a message with sorted keys and writes the
// replay's directories as $WORKSPACE, $STATE and $HOME.
func (c *stdioClient) normalise(line []byte) string {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(line)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	s := c.env.replacer.Replace(b.String())
	for _, r := range c.tr.scrub {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

const defaultInitialize = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent-mcp-conformance","version":"1.0.0"}}`

// handshake performs initialize and notifications/initialized.
func (c *stdioClient) handshake() {
	params := json.RawMessage(defaultInitialize)
	if c.tr.init != nil {
		params = c.tr.init
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "conformance-init", "method": "initialize", "params": params})
	c.send(string(b))
	if !c.await("initialize", func(m message) bool { return string(m.ID) == `"conformance-init"` }, false) {
		c.t.Fatalf("the server closed the stream before answering initialize\nstderr:\n%s", c.stderr.String())
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// play sends every client line, waiting for answers as the format says.
func (c *stdioClient) play() {
	for i, line := range c.tr.client {
		if c.closed {
			c.got = append(c.got, fmt.Sprintf("(client line %d not sent: the server closed the stream)\n", i+1))
			continue
		}
		var m message
		isMsg := json.Unmarshal([]byte(line), &m) == nil && m.Method != ""
		c.send(line)
		what := fmt.Sprintf("client line %d (%.80s)", i+1, line)
		var ok bool
		switch {
		case isMsg && m.hasID():
			id := string(m.ID)
			ok = c.await(what, func(r message) bool { return r.Method == "" && string(r.ID) == id }, true)
		case isMsg:
			continue // a notification: nothing comes back
		default:
			ok = c.await(what, func(r message) bool { return r.Method == "" }, true)
		}
		if !ok {
			c.got = append(c.got, fmt.Sprintf("(the server closed the stream after client line %d)\n", i+1))
		}
	}
}

// stop closes stdin and waits for the process, killing it if it lingers.
func (c *stdioClient) stop() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		c.t.Errorf("the server did not exit within 20s of stdin closing\nstderr:\n%s", c.stderr.String())
	}
	// Drain anything still buffered so the reader goroutine ends.
	for range c.lines {
	}
}

func runTranscript(t *testing.T, file string) {
	e := newTranscriptEnv(t)
	tr := loadTranscript(t, file, e)
	c := startServer(t, e, tr)
	handshake := true
	for _, l := range tr.client {
		var m message
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "initialize" {
			handshake = false
		}
	}
	if handshake {
		c.handshake()
	}
	c.play()
	c.stop()
	if strings.Contains(c.stderr.String(), "panic:") {
		t.Errorf("the server panicked:\n%s", c.stderr.String())
	}
	got := strings.Join(c.got, "")
	want, _ := tr.archive.section("server")
	if *update {
		if got != string(want) {
			tr.archive.setSection("server", []byte(got))
			if err := os.WriteFile(file, tr.archive.format(), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", file)
		}
	} else if got != string(want) {
		t.Errorf("%s: server messages differ (-want +got):\n%s\nrun `go test ./conformance -run 'TestTranscripts/%s' -update` to accept them\nstderr:\n%s",
			file, lineDiff(string(want), got), strings.TrimSuffix(filepath.Base(file), ".txtar"), c.stderr.String())
	}
	for rel, wantData := range tr.want {
		gotData, err := os.ReadFile(filepath.Join(e.workspace, filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("%s: want/%s: %v", file, rel, err)
			continue
		}
		if !bytes.Equal(gotData, wantData) {
			t.Errorf("%s: workspace file %s differs (-want +got):\n%s", file, rel, lineDiff(string(wantData), string(gotData)))
		}
	}
}

// lineDiff is a small line diff (longest common subsequence) for test
// failure messages.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + y[j] + "\n")
			j++
		default:
			out.WriteString("- " + x[i] + "\n")
			i++
		}
	}
	return out.String()
}

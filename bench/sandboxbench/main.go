package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// burnEnv makes this program a CPU burner (-burn) instead of a bench.
const burnEnv = "SANDBOXBENCH_BURN"

func main() {
	if os.Getenv(burnEnv) != "" {
		burn()
	}
	bin := flag.String("bin", "", "path of the built agent-mcp binary")
	baseBin := flag.String("base", "", "path of another agent-mcp binary to measure in the same run, call for call (e.g. one built from an earlier commit)")
	runs := flag.Int("runs", 100, "timed calls per configuration (after 5 warm-up calls)")
	command := flag.String("command", "echo hi", "the command line each call runs (in the server's working directory, a new temporary one per server)")
	gitFiles := flag.Int("git", 0, "make each server's working directory a git repository of this many committed files (0: a plain directory), so that the per-command repository scan and index reading are measured")
	only := flag.String("only", "", "comma separated configurations to measure (off, landlock, landlock+cgroup, namespaces, namespaces+landlock); empty: all")
	bwrap := flag.String("bwrap", "bwrap", "bubblewrap's binary, for the floor rows (bash -c COMMAND bare and inside bwrap --unshare-all); empty: no floor rows")
	burners := flag.Int("burn", 0, "CPU burners (busy processes) to run beside the bench, so that it measures a loaded machine")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "sandboxbench: -bin is required")
		os.Exit(2)
	}
	stop, err := startBurners(*burners)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench: -burn:", err)
		os.Exit(1)
	}
	err = run(*bin, *baseBin, *runs, *command, *only, *gitFiles, *bwrap)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
}

type config struct {
	name, sandbox, layers string
}

// row is one thing timed each round: a configuration of one binary (a
// server, called through its MCP client), or a floor row (a process
// the bench starts itself).
type row struct {
	name  string
	call  func() (time.Duration, error)
	times []time.Duration
	// base is the row this one's added time is measured from (the
	// same binary's off row, or the bare shell for bubblewrap); nil for
	// none.
	base *row
	// of is the row of the other binary this one is compared with
	// (-base), nil for none.
	of *row
}

func (r *row) median() time.Duration { return r.times[len(r.times)/2] }

func (r *row) added() (time.Duration, bool) {
	if r.base == nil {
		return 0, false
	}
	return r.median() - r.base.median(), true
}

func run(bin, baseBin string, runs int, command, only string, gitFiles int, bwrap string) error {
	ctx := context.Background()
	configs, err := pick(only)
	if err != nil {
		return err
	}
	floorDir, err := os.MkdirTemp("", "sandboxbench-floor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(floorDir)
	floor, err := floorRows(bwrap, command, floorDir)
	if err != nil {
		return err
	}
	servers, closeAll, err := serverRows(ctx, configs, bin, baseBin, command, gitFiles)
	defer closeAll()
	if err != nil {
		return err
	}
	rows := append(floor, servers...)
	load, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		fmt.Printf("load average before: %s", load)
	}
	if err := timeRounds(rows, runs); err != nil {
		return err
	}
	if load, err = os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average after:  %s", load)
	}
	report(rows, floor)
	return nil
}

func pick(only string) ([]config, error) {
	var configs []config
	for _, c := range []config{
		{"off", "off", ""},
		{"landlock", "auto", "landlock"},
		{"landlock+cgroup", "auto", "landlock,cgroup"},
		{"namespaces", "auto", "namespaces"},
		{"namespaces+landlock", "auto", "namespaces,landlock"},
	} {
		if only == "" || slices.Contains(strings.Split(only, ","), c.name) {
			configs = append(configs, c)
		}
	}
	if len(configs) == 0 {
		return nil, fmt.Errorf("-only %q names no configuration", only)
	}
	return configs, nil
}

// floorRows are the shell alone (bash -c COMMAND) and inside bubblewrap
// making every namespace it can (--unshare-all: user, mount, PID, IPC,
// UTS, cgroup and network), with the root file system read-only, its own
// /proc and /dev and the working directory writable: what a sandbox that
// makes namespaces costs at the least. Both run in dir. None when bwrap
// is empty or not installed (a note says so).
func floorRows(bwrap, command, dir string) ([]*row, error) {
	if bwrap == "" {
		return nil, nil
	}
	path, err := exec.LookPath(bwrap)
	if err != nil {
		fmt.Printf("no bubblewrap (%v): no floor rows\n", err)
		return nil, nil
	}
	shell, err := exec.LookPath("bash")
	if err != nil {
		return nil, err
	}
	start := func(name string, args ...string) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			cmd := exec.Command(name, args...)
			cmd.Dir = dir
			t := time.Now()
			out, err := cmd.CombinedOutput()
			d := time.Since(t)
			if err != nil {
				return d, fmt.Errorf("%v: %s", err, out)
			}
			return d, nil
		}
	}
	bare := &row{name: "bash -c (no sandbox)", call: start(shell, "-c", command)}
	bw := &row{name: "bwrap --unshare-all", base: bare, call: start(path,
		"--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--bind", dir, dir, "--chdir", dir, shell, "-c", command)}
	// A bubblewrap that cannot run here (no user namespaces) fails now,
	// not in the middle of the run.
	if _, err := bw.call(); err != nil {
		return nil, fmt.Errorf("bubblewrap cannot run here: %w", err)
	}
	return []*row{bare, bw}, nil
}

// serverRows starts a server per configuration and binary; closeAll
// ends them (and removes their directories).
func serverRows(ctx context.Context, configs []config, bin, baseBin, command string, gitFiles int) (rows []*row, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	bins := []string{bin}
	if baseBin != "" {
		bins = append(bins, baseBin)
	}
	off := make([]*row, len(bins))
	for _, c := range configs {
		var first *row
		for bi, b := range bins {
			dir, err := os.MkdirTemp("", "sandboxbench-")
			if err != nil {
				return rows, closeAll, err
			}
			closers = append(closers, func() { os.RemoveAll(dir) })
			if err := makeRepo(dir, gitFiles); err != nil {
				return rows, closeAll, err
			}
			cs, err := connect(ctx, b, dir, c)
			if err != nil {
				return rows, closeAll, fmt.Errorf("%s: %w", c.name, err)
			}
			closers = append(closers, func() { cs.Close() })
			r := &row{name: c.name, call: toolCall(ctx, cs, command), base: off[bi]}
			if bi == 1 {
				r.name += " (base)"
				r.of = first
			}
			if c.name == "off" {
				off[bi], r.base = r, nil
			}
			first = cmpOr(first, r)
			rows = append(rows, r)
		}
	}
	return rows, closeAll, nil
}

func cmpOr(a, b *row) *row {
	if a != nil {
		return a
	}
	return b
}

func connect(ctx context.Context, bin, dir string, c config) (*mcp.ClientSession, error) {
	cmd := exec.Command(bin, "serve", "--cwd", dir, "--sandbox", c.sandbox, "--permission-mode", "bypassPermissions")
	cmd.Env = os.Environ()
	if c.layers != "" {
		cmd.Env = append(cmd.Env, "AGENT_MCP_SANDBOX_LAYERS="+c.layers)
	}
	return mcp.NewClient(&mcp.Implementation{Name: "sandboxbench", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
}

func toolCall(ctx context.Context, cs *mcp.ClientSession, command string) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": command}})
		d := time.Since(start)
		if err == nil && res.IsError {
			err = fmt.Errorf("%q failed: %v", command, res.Content)
		}
		return d, err
	}
}

// timeRounds calls every row once a round, so that the machine's load
// falls on all of them alike; in a new order each round, so that no row
// always follows the same one (a sandboxed call's launcher is still
// being reaped, and its cgroup removed, as the next call starts).
func timeRounds(rows []*row, runs int) error {
	order := slices.Clone(rows)
	rng := rand.New(rand.NewPCG(1, 2))
	for r := -5; r < runs; r++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, s := range order {
			d, err := s.call()
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if r >= 0 {
				s.times = append(s.times, d)
			}
		}
	}
	for _, s := range rows {
		slices.Sort(s.times)
	}
	return nil
}

// report prints each row's median and 90th percentile, the time it adds
// to its base (the off row of its binary; the bare shell for
// bubblewrap), that as a multiple of what bubblewrap adds, and, with
// -base, this binary's median over the other's.
func report(rows, floor []*row) {
	var bwrapAdded time.Duration
	if len(floor) == 2 {
		bwrapAdded, _ = floor[1].added()
	}
	fmt.Printf("%-28s %10s %10s %10s %12s\n", "configuration", "median", "p90", "added", "÷ bwrap's")
	for _, s := range rows {
		med, p90 := s.median(), s.times[len(s.times)*9/10]
		line := fmt.Sprintf("%-28s %10s %10s", s.name, med.Round(10*time.Microsecond), p90.Round(10*time.Microsecond))
		added, ok := s.added()
		switch {
		case !ok:
			line += fmt.Sprintf(" %10s %12s", "-", "-")
		case bwrapAdded > 0:
			line += fmt.Sprintf(" %+8.1fms %11.2f×", ms(added), float64(added)/float64(bwrapAdded))
		default:
			line += fmt.Sprintf(" %+8.1fms %12s", ms(added), "-")
		}
		if s.of != nil {
			line += fmt.Sprintf("   this binary / base: %.2f×", float64(s.of.median())/float64(med))
		}
		fmt.Println(line)
	}
	if bwrapAdded <= 0 && len(floor) == 2 {
		fmt.Println("bubblewrap added nothing measurable: no ratio")
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// startBurners starts n processes that each keep a CPU busy; stop ends
// them.
func startBurners(n int) (stop func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command(self)
		c.Env = append(os.Environ(), burnEnv+"=1")
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

// burn keeps one CPU busy until the process is killed.
func burn() {
	runtime.GOMAXPROCS(1)
	x := uint64(1)
	for {
		x = x*6364136223846793005 + 1442695040888963407
		if x == 0 {
			break
		}
	}
	os.Exit(int(x & 1))
}

// makeRepo makes dir a git repository of n committed files in 100-file
// directories; nothing when n is 0.
func makeRepo(dir string, n int) error {
	if n == 0 {
		return nil
	}
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintln(i)), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("sh", "-c", "git init -q && git add -A && git -c user.name=bench -c user.email=bench@example.com commit -qm files")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("making the repository: %v: %s", err, out)
	}
	return nil
}

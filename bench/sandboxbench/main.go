package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "", "path of the built agent-mcp binary")
	baseBin := flag.String("base", "", "path of another agent-mcp binary to measure in the same run, call for call (e.g. one built from an earlier commit)")
	runs := flag.Int("runs", 100, "timed calls per configuration (after 5 warm-up calls)")
	command := flag.String("command", "echo hi", "the command line each call runs (in the server's working directory, a new temporary one per server)")
	gitFiles := flag.Int("git", 0, "make each server's working directory a git repository of this many committed files (0: a plain directory), so that the per-command repository scan and index reading are measured")
	only := flag.String("only", "", "comma separated configurations to measure (off, landlock, landlock+cgroup, namespaces, namespaces+landlock); empty: all")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "sandboxbench: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *baseBin, *runs, *command, *only, *gitFiles); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
}

type config struct {
	name, sandbox, layers string
}

// server is one configuration of one binary.
type server struct {
	name  string
	cs    *mcp.ClientSession
	times []time.Duration
}

func run(bin, baseBin string, runs int, command, only string, gitFiles int) error {
	ctx := context.Background()
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
		return fmt.Errorf("-only %q names no configuration", only)
	}
	bins := []string{bin}
	if baseBin != "" {
		bins = append(bins, baseBin)
	}
	var servers []*server
	for _, c := range configs {
		for bi, b := range bins {
			dir, err := os.MkdirTemp("", "sandboxbench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := makeRepo(dir, gitFiles); err != nil {
				return err
			}
			cmd := exec.Command(b, "serve", "--cwd", dir, "--sandbox", c.sandbox, "--permission-mode", "bypassPermissions")
			cmd.Env = append(os.Environ(), "AGENT_MCP_SANDBOX_LAYERS="+c.layers)
			if c.layers == "" {
				cmd.Env = os.Environ()
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "sandboxbench", Version: "1"}, nil).
				Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			defer cs.Close()
			name := c.name
			if bi == 1 {
				name += " (base)"
			}
			servers = append(servers, &server{name: name, cs: cs})
		}
	}
	call := func(cs *mcp.ClientSession) (time.Duration, error) {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": command}})
		d := time.Since(start)
		if err == nil && res.IsError {
			err = fmt.Errorf("%q failed: %v", command, res.Content)
		}
		return d, err
	}
	// Call for call, every server in turn, so that the machine's load
	// falls on all of them alike; in a new order each round, so that no
	// server always follows the same one (a sandboxed call's launcher is
	// still being reaped, and its cgroup removed, as the next call
	// starts).
	order := slices.Clone(servers)
	rng := rand.New(rand.NewPCG(1, 2))
	for r := -5; r < runs; r++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, s := range order {
			d, err := call(s.cs)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if r >= 0 {
				s.times = append(s.times, d)
			}
		}
	}
	fmt.Printf("%-28s %10s %10s %10s\n", "sandbox", "median", "p90", "vs off")
	medians := map[string]time.Duration{}
	for _, s := range servers {
		slices.Sort(s.times)
		medians[s.name] = s.times[len(s.times)/2]
	}
	for i, s := range servers {
		med, p90 := s.times[len(s.times)/2], s.times[len(s.times)*9/10]
		off, ok := medians["off"]
		if i%len(bins) == 1 {
			off, ok = medians["off (base)"]
		}
		vsOff := fmt.Sprintf("%+9.1fms", float64(med-off)/float64(time.Millisecond))
		if !ok {
			vsOff = fmt.Sprintf("%11s", "-")
		}
		line := fmt.Sprintf("%-28s %10s %10s %s", s.name, med.Round(10*time.Microsecond), p90.Round(10*time.Microsecond), vsOff)
		if i%len(bins) == 1 {
			line += fmt.Sprintf("   this binary / base: %.2f×", float64(servers[i-1].times[len(servers[i-1].times)/2])/float64(med))
		}
		fmt.Println(line)
	}
	return nil
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

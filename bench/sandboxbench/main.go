package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "", "path of the built agent-mcp binary")
	baseBin := flag.String("base", "", "path of another agent-mcp binary to measure in the same run, call for call (e.g. one built from an earlier commit)")
	runs := flag.Int("runs", 100, "timed calls per configuration (after 5 warm-up calls)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "sandboxbench: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *baseBin, *runs); err != nil {
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

func run(bin, baseBin string, runs int) error {
	ctx := context.Background()
	configs := []config{
		{"off", "off", ""},
		{"landlock", "auto", "landlock"},
		{"landlock+cgroup", "auto", "landlock,cgroup"},
		{"namespaces", "auto", "namespaces"},
		{"namespaces+landlock", "auto", "namespaces,landlock"},
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
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo hi"}})
		d := time.Since(start)
		if err == nil && res.IsError {
			err = fmt.Errorf("echo failed: %v", res.Content)
		}
		return d, err
	}
	// Call for call, every server in turn, so that the machine's load
	// falls on all of them alike.
	for r := -5; r < runs; r++ {
		for _, s := range servers {
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
		off := medians["off"]
		if i%len(bins) == 1 {
			off = medians["off (base)"]
		}
		line := fmt.Sprintf("%-28s %10s %10s %+9.1fms", s.name, med.Round(10*time.Microsecond), p90.Round(10*time.Microsecond),
			float64(med-off)/float64(time.Millisecond))
		if i%len(bins) == 1 {
			line += fmt.Sprintf("   this binary / base: %.2f×", float64(servers[i-1].times[len(servers[i-1].times)/2])/float64(med))
		}
		fmt.Println(line)
	}
	return nil
}

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
	runs := flag.Int("runs", 100, "timed calls per configuration (after 5 warm-up calls)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "sandboxbench: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
}

type config struct {
	name, sandbox, layers string
}

func run(bin string, runs int) error {
	ctx := context.Background()
	configs := []config{
		{"off", "off", ""},
		{"landlock", "auto", "landlock"},
		{"landlock+cgroup", "auto", "landlock,cgroup"},
		{"namespaces", "auto", "namespaces"},
		{"namespaces+landlock", "auto", "namespaces,landlock"},
	}
	dir, err := os.MkdirTemp("", "sandboxbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sessions := make([]*mcp.ClientSession, len(configs))
	for i, c := range configs {
		cmd := exec.Command(bin, "serve", "--cwd", dir, "--sandbox", c.sandbox, "--permission-mode", "bypassPermissions")
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
		sessions[i] = cs
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
	times := make([][]time.Duration, len(configs))
	for r := -5; r < runs; r++ {
		for i, cs := range sessions {
			d, err := call(cs)
			if err != nil {
				return fmt.Errorf("%s: %w", configs[i].name, err)
			}
			if r >= 0 {
				times[i] = append(times[i], d)
			}
		}
	}
	fmt.Printf("%-22s %10s %10s %10s\n", "sandbox", "median", "p90", "vs off")
	var base time.Duration
	for i, c := range configs {
		slices.Sort(times[i])
		med, p90 := times[i][len(times[i])/2], times[i][len(times[i])*9/10]
		if i == 0 {
			base = med
		}
		fmt.Printf("%-22s %10s %10s %+9.1fms\n", c.name, med.Round(10*time.Microsecond), p90.Round(10*time.Microsecond),
			float64(med-base)/float64(time.Millisecond))
	}
	return nil
}

//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
)

// costCommands are the command lines timed: a trivial one, and git status
// in a repository of gitFiles committed files.
var costCommands = []struct{ name, line string }{
	{"`true`", "true"},
	{"`git status` (2,000 files)", "git status >/dev/null"},
}

const gitFiles = 2000

// bwrapFloor is bubblewrap alone, as the least any of these sandboxes
// does: a new mount, PID, IPC, UTS and network namespace over a read-only
// root with the working directory writable.
type bwrapFloor struct{}

func (bwrapFloor) name() string { return "bubblewrap alone (floor)" }

func (bwrapFloor) open(w *world) session {
	return &execSession{argv: func(cmd string) []string {
		return []string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", w.Work, w.Work,
			"--unshare-all", "--die-with-parent", "--chdir", w.Work, "--", "bash", "-c", cmd}
	}, dir: w.Work, env: w.env(), cred: w.cred}
}

// costTable is the median and 90th percentile round trip of each command
// in each tool.
type costTable struct {
	runs  int
	names []string
	// times[tool][command]
	times [][][]time.Duration
}

// measureCost times every command in every tool, call for call: each
// round runs each tool once, in a new order each round, so that the
// machine's load falls on all of them alike.
func measureCost(tools []tool, base string, runs int, cred *syscall.Credential) (*costTable, error) {
	b := &bench{cred: cred}
	type runner struct {
		name string
		s    session
	}
	var rs []runner
	for _, t := range tools {
		w, err := costWorld(base, b)
		if err != nil {
			return nil, err
		}
		defer w.close()
		s, err := t.open(w, &attackcorpus.Case{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name(), err)
		}
		defer s.close()
		if err := w.handOver(); err != nil {
			return nil, err
		}
		rs = append(rs, runner{t.name(), s})
	}
	w, err := costWorld(base, b)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := w.handOver(); err != nil {
		return nil, err
	}
	rs = append(rs, runner{bwrapFloor{}.name(), bwrapFloor{}.open(w)})
	ct := &costTable{runs: runs}
	for _, r := range rs {
		ct.names = append(ct.names, r.name)
		ct.times = append(ct.times, make([][]time.Duration, len(costCommands)))
	}
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for ci, cmd := range costCommands {
		for round := -2; round < runs; round++ {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, i := range order {
				start := time.Now()
				out, err := rs[i].s.run(cmd.line+" && echo COST-OK", false)
				d := time.Since(start)
				if err != nil || !strings.Contains(out, "COST-OK") {
					return nil, fmt.Errorf("%s: %s failed: %v %s", rs[i].name, cmd.line, err, out)
				}
				if round >= 0 {
					ct.times[i][ci] = append(ct.times[i][ci], d)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "cost: %s measured\n", cmd.name)
	}
	return ct, nil
}

// costWorld is a world whose working directory is a repository of
// gitFiles committed files.
func costWorld(base string, b *bench) (*world, error) {
	w, err := newWorld(base, b)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(w.Work, ".git")); err != nil {
		return nil, err
	}
	for i := range gitFiles {
		sub := filepath.Join(w.Work, fmt.Sprintf("d%03d", i/100))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintln(i)), 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command("sh", "-c", "git init -q && git add -A && git -c user.name=bench -c user.email=bench@example.com commit -qm files")
	cmd.Dir = w.Work
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("making the repository: %v: %s", err, out)
	}
	return w, nil
}

func (ct *costTable) markdown() string {
	var s strings.Builder
	s.WriteString("| tool |")
	for _, c := range costCommands {
		s.WriteString(" " + c.name + ": median | p90 |")
	}
	s.WriteString("\n|---|" + strings.Repeat("---|---|", len(costCommands)) + "\n")
	for i, name := range ct.names {
		s.WriteString("| " + name + " |")
		for ci := range costCommands {
			t := slices.Clone(ct.times[i][ci])
			slices.Sort(t)
			s.WriteString(fmt.Sprintf(" %s | %s |", ms(t[len(t)/2]), ms(t[len(t)*9/10])))
		}
		s.WriteString("\n")
	}
	s.WriteString(fmt.Sprintf("\n%d timed round trips per tool and command (after 2 untimed), interleaved.\n", ct.runs))
	return s.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "", "path of the built agent-mcp binary")
	tree := flag.String("tree", "", "directory to search")
	runs := flag.Int("runs", 5, "timed runs per row (the median is reported)")
	gen := flag.Int("gen", 0, "first write a synthetic tree of this many files into -tree (if it does not exist yet)")
	only := flag.String("only", "", "run only rows whose name contains this")
	relayMode := flag.Bool("relay", false, "relay tool calls read from stdin (one JSON object {name, arguments} a line) to the server through a go-sdk client, writing each result and its time to stdout (bench/scale.py's go-sdk view)")
	flag.Parse()
	if *bin == "" || *tree == "" {
		fmt.Fprintln(os.Stderr, "usage: searchbench -bin AGENT_MCP_BINARY -tree DIR [-gen N] [-runs N]")
		os.Exit(2)
	}
	if *gen > 0 {
		if _, err := os.Stat(*tree); os.IsNotExist(err) {
			if err := genTree(*tree, *gen); err != nil {
				fail(err)
			}
		}
	}
	abs, err := filepath.Abs(*tree)
	if err != nil {
		fail(err)
	}
	if *relayMode {
		if err := relay(*bin, abs, os.Stdin, os.Stdout); err != nil {
			fail(err)
		}
		return
	}
	if err := run(*bin, abs, *runs, *only); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "searchbench:", err)
	os.Exit(1)
}

// row is one measurement: a tool call and the command it is compared with.
type row struct {
	name string
	tool string
	args map[string]any
	cmd  []string
}

// rgBase are the flags that make rg search what Grep searches: hidden
// files too, no VCS directories, long lines cut (as Claude Code runs it).
var rgBase = []string{"rg", "--hidden", "--glob", "!.git", "--glob", "!.svn", "--glob", "!.hg",
	"--glob", "!.bzr", "--glob", "!.jj", "--glob", "!.sl", "--max-columns", "500", "--no-messages"}

func rows() []row {
	patterns := []struct {
		name, pattern string
		insensitive   bool
	}{
		{"literal", "ErrNotExist", false},
		{"case-insensitive word", "deadline", true},
		{"alternation", "ErrClosed|ErrDeadlineExceeded|ErrNoProgress", false},
		{"char class regex", `[A-Z][a-z]+Error\(`, false},
	}
	modes := []struct{ mode, flag string }{
		{"files_with_matches", "-l"},
		{"content", "-n"},
		{"count", "-c"},
	}
	var out []row
	for _, p := range patterns {
		for _, m := range modes {
			args := map[string]any{"pattern": p.pattern, "output_mode": m.mode}
			cmd := append(slices.Clone(rgBase), m.flag)
			if p.insensitive {
				args["-i"] = true
				cmd = append(cmd, "-i")
			}
			cmd = append(cmd, "--", p.pattern, ".")
			out = append(out, row{name: fmt.Sprintf("Grep %s, %s", p.name, m.mode), tool: "Grep", args: args, cmd: cmd})
		}
	}
	out = append(out,
		row{name: "Glob **/*.go vs fdfind", tool: "Glob", args: map[string]any{"pattern": "**/*.go"},
			cmd: []string{"fdfind", "--type", "f", "--hidden", "--no-ignore", "--glob", "*.go", "--exclude", ".git"}},
		row{name: "Glob **/*.go vs rg --files", tool: "Glob", args: map[string]any{"pattern": "**/*.go"},
			cmd: []string{"rg", "--files", "--hidden", "--no-ignore", "--glob", "*.go", "--glob", "!.git"}},
		row{name: "Glob **/*.go vs rg --files --sort modified", tool: "Glob", args: map[string]any{"pattern": "**/*.go"},
			cmd: []string{"rg", "--files", "--hidden", "--no-ignore", "--glob", "*.go", "--glob", "!.git", "--sort", "modified"}},
		row{name: "Glob *_test.go vs fdfind", tool: "Glob", args: map[string]any{"pattern": "*_test.go"},
			cmd: []string{"fdfind", "--type", "f", "--hidden", "--no-ignore", "--glob", "*_test.go", "--exclude", ".git"}},
	)
	return out
}

func run(bin, tree string, runs int, only string) error {
	ctx := context.Background()
	server := exec.Command(bin, "serve")
	server.Dir = tree
	server.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "searchbench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		return fmt.Errorf("starting %s serve: %w", bin, err)
	}
	defer cs.Close()

	fmt.Printf("tree: %s\nruns: %d, ours and theirs alternating (median, after one warm-up each)\n\n", tree, runs)
	fmt.Printf("| %-48s | %10s | %10s | %6s | %s\n", "row", "ours", "theirs", "ratio", "result (ours)")
	fmt.Printf("|%s|%s|%s|%s|---\n", strings.Repeat("-", 50), strings.Repeat("-", 12), strings.Repeat("-", 12), strings.Repeat("-", 8))
	worst := 0.0
	for _, r := range rows() {
		if only != "" && !strings.Contains(r.name, only) {
			continue
		}
		var summary string
		callOurs := func() error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: r.tool, Arguments: r.args})
			if err != nil {
				return err
			}
			if res.IsError {
				return fmt.Errorf("%s: %s", r.name, text(res))
			}
			summary = summarize(res)
			return nil
		}
		callTheirs := func() error {
			c := exec.Command(r.cmd[0], r.cmd[1:]...)
			c.Dir = tree
			c.Stdout = io.Discard
			err := c.Run()
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
				return nil // rg: no match
			}
			if err != nil {
				return fmt.Errorf("%s: %v", strings.Join(r.cmd, " "), err)
			}
			return nil
		}
		ours, theirs, err := measurePair(runs, callOurs, callTheirs)
		if err != nil {
			return err
		}
		ratio := float64(ours) / float64(theirs)
		worst = max(worst, ratio)
		fmt.Printf("| %-48s | %10s | %10s | %6.2f | %s\n", r.name, ms(ours), ms(theirs), ratio, summary)
	}
	fmt.Printf("\nworst ratio: %.2f\n", worst)
	if hwm := peakRSS(server.Process.Pid); hwm != "" {
		fmt.Printf("agent-mcp serve peak RSS (VmHWM): %s\n", hwm)
	}
	return nil
}

// measurePair runs a and b once each to warm up, then alternately runs
// times, so both see the same load on a shared machine, and returns each
// one's median.
func measurePair(runs int, a, b func() error) (time.Duration, time.Duration, error) {
	if err := a(); err != nil {
		return 0, 0, err
	}
	if err := b(); err != nil {
		return 0, 0, err
	}
	var da, db []time.Duration
	for range runs {
		for _, x := range []struct {
			f func() error
			d *[]time.Duration
		}{{a, &da}, {b, &db}} {
			start := time.Now()
			if err := x.f(); err != nil {
				return 0, 0, err
			}
			*x.d = append(*x.d, time.Since(start))
		}
	}
	slices.Sort(da)
	slices.Sort(db)
	return da[len(da)/2], db[len(db)/2], nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// summarize gives the structured totals of a result.
func summarize(res *mcp.CallToolResult) string {
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	var parts []string
	for _, k := range []string{"numFiles", "numLines", "numMatches"} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(parts, " ")
}

// peakRSS reads a process's peak resident set size on Linux.
func peakRSS(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return ""
}

// genTree writes n files of Go-like text into dir: 100 files per
// directory, two levels deep, with a .git directory and .gitignore files so
// the ignore layer is exercised, and the benchmark's patterns sprinkled in.
func genTree(dir string, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the of and to in is for that return err nil func if else var const type struct
		interface string int byte error ctx context value result buffer reader writer close open read write
		timeout Parse Format handler request response server client config option file path name index count length`)
	// The words the benchmark looks for are sprinkled in rarely, as in
	// real code: most files hold none of them.
	rare := []string{"ErrNotExist", "ErrClosed", "ErrNoProgress", "ErrDeadlineExceeded", "deadline", "Deadline", "DEADLINE", "NewFooError("}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\nbuild/\n"), 0o644); err != nil {
		return err
	}
	var line strings.Builder
	for i := range n {
		sub := filepath.Join(dir, "pkg"+strconv.Itoa(i/10000), "mod"+strconv.Itoa(i/100%100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		ext := []string{".go", ".go", ".go", ".py", ".md", ".tmp"}[rng.IntN(6)]
		var b strings.Builder
		lines := 20 + rng.IntN(80)
		for range lines {
			line.Reset()
			for k := range 4 + rng.IntN(10) {
				if k > 0 {
					line.WriteByte(' ')
				}
				line.WriteString(words[rng.IntN(len(words))])
			}
			if rng.IntN(400) == 0 {
				line.WriteString(" " + rare[rng.IntN(len(rare))])
			}
			b.WriteString(line.String())
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(sub, "f"+strconv.Itoa(i)+ext), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

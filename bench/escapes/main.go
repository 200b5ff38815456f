//go:build linux

// Command escapes is the escape scoreboard: it runs the attack corpus
// (e2e/attacks/*.txtar) against agent-mcp's Bash tool, Anthropic's sandbox
// runtime (srt) and Codex's sandbox (codex sandbox), each with the nearest
// equivalent configuration, the same setup and the same judgement; it
// measures what one command costs in each, with bubblewrap alone as the
// floor; it prints the scoreboard and writes docs/security.md's tables.
//
//	sh bench/escapes/install-peers.sh    # the peers, from their registries
//	go run ./bench/escapes               # everything, and docs/security.md
//	go run ./bench/escapes -cases 'git-' -tools agent-mcp,codex -cost=false -doc ''
//
// Run it from the repository's root, as root: the tools run as root too
// (as they do for most users of a container, and the user's own file
// permissions stop nothing), or, with -user NAME, as that unprivileged
// user, whose worlds are handed to it (as a developer's machine runs
// them; what the kernel exempts root from holds there).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
)

func main() {
	bin := flag.String("bin", "", "agent-mcp binary to test (default: built from this checkout)")
	cache := flag.String("peers", "bench/escapes/.cache", "where install-peers.sh put the peers")
	toolList := flag.String("tools", "agent-mcp,sandbox-runtime,codex", "comma separated tools to run")
	casesRE := flag.String("cases", "", "run only the cases whose name matches this regular expression")
	base := flag.String("root", "/var/tmp", "where the worlds are made (outside /tmp, which Codex's profile leaves writable)")
	cost := flag.Bool("cost", true, "measure the per-command cost")
	runs := flag.Int("runs", 20, "timed round trips per tool and command in the cost table")
	doc := flag.String("doc", "docs/security.md", "document whose tables are rewritten (empty: none)")
	verbose := flag.Bool("v", false, "print every failed check and the outputs")
	user := flag.String("user", "", "run the tools (and the user's own steps) as this unprivileged user instead of as root")
	merge := flag.Bool("merge", false, "with -cases: put the cases run into the document's case table beside the earlier run's other rows (dropping rows of cases gone from the corpus) and count the scoreboard again; the cost table and machine stay as they were")
	flag.Parse()
	cred, err := credential(*user)
	if err != nil {
		fmt.Fprintln(os.Stderr, "escapes: -user:", err)
		os.Exit(2)
	}
	if err := run(*bin, *cache, *toolList, *casesRE, *base, *cost && !*merge, *runs, *doc, *verbose, *merge, cred); err != nil {
		fmt.Fprintln(os.Stderr, "escapes:", err)
		os.Exit(1)
	}
}

// bench is what every run shares.
type bench struct {
	helper, tcpHost, tcpPort string
	// cred is the user the tools run as; nil: this process's.
	cred *syscall.Credential
}

// credential is the unprivileged user name's, or nil for "".
func credential(name string) (*syscall.Credential, error) {
	if name == "" {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	if uid == 0 {
		return nil, fmt.Errorf("%s is root: give an unprivileged user, or none", name)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func run(bin, cache, toolList, casesRE, base string, cost bool, runs int, doc string, verbose, merge bool, cred *syscall.Credential) error {
	re, err := regexp.Compile(casesRE)
	if err != nil {
		return fmt.Errorf("-cases: %w", err)
	}
	cases, err := attackcorpus.Load(filepath.Join("e2e", "attacks"))
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(base, "escapes-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	source := "" // what the binary was built from, where known
	if bin == "" {
		source = sourceCommit()
		bin = filepath.Join(tmp, "agent-mcp")
		if out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
			return fmt.Errorf("building agent-mcp: %v\n%s", err, out)
		}
	}
	helperDir := filepath.Join(tmp, "helper")
	if err := os.Mkdir(helperDir, 0o755); err != nil {
		return err
	}
	b := &bench{cred: cred}
	if b.helper, err = attackcorpus.BuildHelper(gobin, helperDir); err != nil {
		return err
	}
	if b.tcpHost, b.tcpPort, err = attackcorpus.ListenTCP(); err != nil {
		return err
	}
	cacheAbs, err := filepath.Abs(cache)
	if err != nil {
		return err
	}
	all := []tool{
		agentMCP{bin: bin, source: source},
		srt{bin: filepath.Join(cacheAbs, "node_modules", ".bin", "srt")},
		codex{bin: filepath.Join(cacheAbs, "node_modules", ".bin", "codex")},
	}
	var tools []tool
	for _, t := range all {
		if !strings.Contains(","+toolList+",", ","+t.name()+",") {
			continue
		}
		tools = append(tools, t)
	}
	if len(tools) == 0 {
		return fmt.Errorf("-tools %q names none of agent-mcp, sandbox-runtime, codex", toolList)
	}
	for _, t := range tools[1:] {
		if _, err := os.Stat(t.(interface{ binPath() string }).binPath()); err != nil {
			return fmt.Errorf("%s is not installed (sh bench/escapes/install-peers.sh): %w", t.name(), err)
		}
	}
	var selected []*attackcorpus.Case
	for _, c := range cases {
		if re.MatchString(c.Name) {
			selected = append(selected, c)
		}
	}
	board := &scoreboard{tools: tools}
	for _, c := range selected {
		row := caseRow{c: c}
		for _, t := range tools {
			start := time.Now()
			r := runCase(t, c, base, b)
			row.results = append(row.results, r)
			fmt.Fprintf(os.Stderr, "%-50s %-16s %-10s %5.1fs\n", c.Name, t.name(), r.mark(), time.Since(start).Seconds())
			if verbose && r.na == "" {
				fmt.Fprintf(os.Stderr, "    %s\n    outputs:\n%s\n", strings.Join(append(r.failed, fmt.Sprint(r.err)), "\n    "), indent(r.output))
			}
		}
		board.rows = append(board.rows, row)
	}
	var costs *costTable
	if cost {
		if costs, err = measureCost(tools, base, runs, cred); err != nil {
			return err
		}
	}
	fmt.Print(board.summary())
	if costs != nil {
		fmt.Print("\n" + costs.markdown())
	}
	if doc == "" {
		return nil
	}
	if len(tools) != len(all) {
		return fmt.Errorf("-doc is written only from a run of every tool: give -doc '' with -tools")
	}
	if merge {
		if err := board.mergeDoc(doc, cases); err != nil {
			return err
		}
		fmt.Print("\nmerged into " + doc + ":\n" + board.summary())
		return writeDoc(doc, board, nil, "")
	}
	if casesRE != "" {
		return fmt.Errorf("-doc is written only from a full run (no -cases), or with -merge: give -doc '' or -merge with a filter")
	}
	return writeDoc(doc, board, costs, machine(tools, cred))
}

func (s srt) binPath() string   { return s.bin }
func (x codex) binPath() string { return x.bin }

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 4000 {
		s = s[:4000] + "…"
	}
	return "      " + strings.ReplaceAll(s, "\n", "\n      ")
}

// result is one case in one tool.
type result struct {
	// na is why the case does not apply to the tool; "" when it does.
	na string
	// failed are the checks that failed (none: held); err is why the run
	// could not be made.
	failed []string
	err    error
	output string
}

func (r result) held() bool { return r.na == "" && r.err == nil && len(r.failed) == 0 }

// ranNot reports whether every failed check is one that says the command
// did not run (the sandbox refused to start it, or it ran out of time):
// not an escape, but not a held case either.
func (r result) ranNot() bool {
	if r.err != nil {
		return true
	}
	for _, f := range r.failed {
		if !strings.Contains(f, "did the command run?") {
			return false
		}
	}
	return len(r.failed) > 0
}

func (r result) mark() string {
	switch {
	case r.na != "":
		return "n/a"
	case r.held():
		return "held"
	case r.ranNot():
		return "not run"
	}
	return "ESCAPED"
}

// runCase runs one case in one tool in a fresh world.
func runCase(t tool, c *attackcorpus.Case, base string, b *bench) result {
	if ok, why := t.applicable(c); !ok {
		return result{na: why}
	}
	w, err := newWorld(base, b)
	if err != nil {
		return result{err: err}
	}
	defer w.close()
	if err := w.plant(c); err != nil {
		return result{err: err}
	}
	s, err := t.open(w, c)
	if err != nil {
		return result{err: err}
	}
	if err := w.handOver(); err != nil {
		s.close()
		return result{err: err}
	}
	defer s.close()
	before := c.Before(w)
	var outputs, failed []string
	for _, st := range c.Steps {
		text := w.Expand(st.Text)
		switch st.Kind {
		case "bash", "bash background":
			out, err := s.run(text, st.Kind == "bash background")
			if err != nil {
				out += "\n(" + err.Error() + ")"
			}
			outputs = append(outputs, out)
		case "taskinput":
			out, err := s.taskInput(text, st.Until)
			if err != nil {
				out += "\n(" + err.Error() + ")"
			}
			outputs = append(outputs, out)
		case "taskoutput":
			out, err := s.taskOutput()
			if err != nil {
				out += "\n(" + err.Error() + ")"
			}
			outputs = append(outputs, out)
		case "user":
			// What the user does next, outside every sandbox.
			out, _ := runLimited([]string{"bash", "-c", text}, w.Work, append(w.env(), "XDG_CONFIG_HOME="+filepath.Join(w.Home, ".config")), w.cred)
			outputs = append(outputs, out)
		case "wait":
			if f := attackcorpus.WaitFor(w, text); f != "" {
				failed = append(failed, f)
			}
		}
	}
	failed = append(failed, c.Judge(w, before, outputs)...)
	return result{failed: failed, output: strings.Join(outputs, "\n")}
}
